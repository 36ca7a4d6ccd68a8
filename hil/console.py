"""A line console on a serial port (a USB serial device or the virtual DUT's pseudo-terminal)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self

import serial

from hil.console_protocol import FinalLine, parse_final_line
from hil.errors import ConsoleTimeout, DutError


@dataclass
class ConsoleReply:
    command: str
    lines: list[str] = field(default_factory=list)
    final: FinalLine | None = None


class SerialConsole:
    """Sends command lines and collects output up to the command's final line.

    Every received line is kept in ``transcript`` (the console log of the test).
    """

    def __init__(self, port: str, baudrate: int = 115200) -> None:
        self.port = port
        self.baudrate = baudrate
        self.transcript: list[str] = []
        self._serial: serial.SerialBase | None = None
        self._pending = b""
        self._backlog: list[str] = []

    def open(self) -> None:
        try:
            self._serial = serial.serial_for_url(self.port, baudrate=self.baudrate, timeout=0.05)
        except (serial.SerialException, OSError) as exc:
            raise DutError(f"cannot open DUT console {self.port}: {exc}") from exc

    def close(self) -> None:
        if self._serial is not None:
            self._serial.close()
            self._serial = None

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write_line(self, line: str) -> None:
        if self._serial is None:
            raise DutError("DUT console is not open")
        self._serial.write(line.encode("ascii", errors="replace") + b"\r\n")

    def write_raw(self, data: bytes) -> None:
        if self._serial is None:
            raise DutError("DUT console is not open")
        self._serial.write(data)

    def _read_lines(self, wait_s: float) -> list[str]:
        if self._serial is None:
            raise DutError("DUT console is not open")
        try:
            chunk = self._serial.read(max(1, self._serial.in_waiting))
        except (serial.SerialException, OSError) as exc:
            raise DutError(f"DUT console {self.port} failed: {exc}") from exc
        if not chunk:
            time.sleep(min(wait_s, 0.01))
            return []
        self._pending += chunk
        *complete, self._pending = self._pending.split(b"\n")
        lines = [raw.rstrip(b"\r").decode("ascii", errors="replace") for raw in complete]
        self.transcript.extend(lines)
        return lines

    def poll_lines(self) -> None:
        """Reads what has arrived without waiting (keeps the DUT's output from backing up)."""
        self._backlog.extend(self._read_lines(0.0))

    def next_line(self, timeout_s: float) -> str | None:
        """Returns the next complete line, or None after timeout_s."""
        deadline = time.monotonic() + timeout_s
        while not self._backlog:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._backlog.extend(self._read_lines(remaining))
        return self._backlog.pop(0)

    def drain(self, quiet_s: float = 0.1) -> list[str]:
        """Reads until the console has been quiet for quiet_s."""
        lines = []
        while (line := self.next_line(quiet_s)) is not None:
            lines.append(line)
        return lines

    def wait_line(self, pattern: str, timeout_s: float) -> str:
        """Waits for an output line matching the regular expression `pattern`."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout_s
        seen: list[str] = []
        while (line := self.next_line(max(0.0, deadline - time.monotonic()))) is not None:
            seen.append(line)
            if regex.search(line):
                return line
            final = parse_final_line(line)
            if final is not None and final.kind == "ERR":
                raise DutError(f"DUT refused: {line}")
        tail = " | ".join(seen[-3:]) or "no output"
        raise ConsoleTimeout(f"DUT printed no line matching {pattern!r} within {timeout_s:g} s ({tail})")

    def wait_final(
        self,
        command: str,
        timeout_s: float,
        accept: Callable[[FinalLine], bool] | None = None,
        reply: ConsoleReply | None = None,
    ) -> ConsoleReply:
        """Collects lines until a final line of `command` that `accept` takes (default: any)."""
        reply = reply or ConsoleReply(command)
        deadline = time.monotonic() + timeout_s
        while True:
            line = self.next_line(max(0.0, deadline - time.monotonic()))
            if line is None:
                tail = " | ".join(reply.lines[-3:]) or "no output"
                raise ConsoleTimeout(f"DUT gave no final line for `{command}` within {timeout_s:g} s ({tail})")
            reply.lines.append(line)
            final = parse_final_line(line)
            if final is None or final.command != command.split()[0]:
                continue
            if final.kind == "ERR" or accept is None or accept(final):
                reply.final = final
                return reply

    def command(
        self, line: str, timeout_s: float = 5.0, accept: Callable[[FinalLine], bool] | None = None
    ) -> ConsoleReply:
        """Sends `line` and returns its output up to the final line."""
        self.write_line(line)
        return self.wait_final(line.split()[0], timeout_s, accept)

    def wait_boot(self, timeout_s: float) -> FinalLine:
        """Waits for the boot banner, asking `version` when the banner was missed."""
        deadline = time.monotonic() + timeout_s
        self.write_line("version")
        while time.monotonic() < deadline:
            line = self.next_line(min(1.0, max(0.0, deadline - time.monotonic())))
            if line is None:
                self.write_line("version")
                continue
            final = parse_final_line(line)
            if final is not None and (final.kind == "BOOT" or (final.kind == "RESULT" and final.command == "version")):
                return final
        raise ConsoleTimeout(f"DUT did not answer on {self.port} within {timeout_s:g} s")
