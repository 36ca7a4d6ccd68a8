"""The one driver of the firmware's console protocol: send a command line, collect its output up
to its final line (`RESULT <cmd> ...`, `ERR <cmd> ...`), wait for a line, identify the DUT.

It reads lines from a source: pytest-embedded's DUT (hil.console.embedded_console, what the HIL
tests use, on a board's USB serial port or the virtual DUT's pseudo-terminal) or a serial port
opened directly (hil.console.serial_console, the firmware's own tests and the benchmark). While
waiting it checks, once a second, that the DUT is still alive, and it treats a boot banner in the
middle of a command as a reset: both are DUT faults, not timeouts.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from hil.console.protocol import FinalLine, parse_final_line
from hil.errors import ConsoleTimeout, DutError

POLL_S = 1.0  # longest wait for a line before the DUT's liveness is checked again


class LineSource(Protocol):
    """Where the driver's lines come from and go to."""

    name: str

    def send(self, line: str) -> None:
        """Writes one command line (the source adds the line ending)."""
        ...

    def read_line(self, timeout_s: float) -> str | None:
        """The next complete line without its ending; None after timeout_s; DutError when the
        port closed."""
        ...


@dataclass
class CommandReply:
    command: str
    final: FinalLine
    output: list[str] = field(default_factory=list)  # every line up to and including the final one


class ConsoleDriver:
    def __init__(self, source: LineSource, alive: Callable[[], bool] | None = None) -> None:
        self.source = source
        self.alive = alive or (lambda: True)
        # who else hears every line as it arrives, whoever reads it (e.g. the DUT's own event lines
        # while a traffic run waits for its report): called with the line and its arrival time
        self.listeners: list[Callable[[str, float], None]] = []

    @contextlib.contextmanager
    def listening(self, listener: Callable[[str, float], None]) -> Iterator[None]:
        self.listeners.append(listener)
        try:
            yield
        finally:
            self.listeners.remove(listener)

    def send(self, line: str) -> None:
        self.source.send(line)

    def next_line(self, timeout_s: float, waiting_for: str = "output") -> str | None:
        """The next line, or None after timeout_s; a DUT that died meanwhile is a DutError."""
        deadline = time.monotonic() + timeout_s
        while (remaining := deadline - time.monotonic()) > 0:
            line = self.source.read_line(min(POLL_S, remaining))
            if line is not None:
                for listener in list(self.listeners):
                    listener(line, time.time())
                return line
            if not self.alive():
                raise DutError(f"DUT died while waiting for {waiting_for}")
        return None

    def drain(self, quiet_s: float = 0.1) -> list[str]:
        """Reads until the console has been quiet for quiet_s."""
        lines = []
        while (line := self.next_line(quiet_s)) is not None:
            lines.append(line)
        return lines

    def wait_final(
        self,
        command: str,
        timeout_s: float,
        accept: Callable[[FinalLine], bool] | None = None,
        boot_is_answer: bool = False,
    ) -> CommandReply:
        """Collects lines until a final line of `command` that `accept` takes (default: any; an
        ERR always ends it)."""
        name = command.split()[0]
        output: list[str] = []
        deadline = time.monotonic() + timeout_s
        while True:
            line = self.next_line(max(0.0, deadline - time.monotonic()), f"the end of `{command}`")
            if line is None:
                tail = " | ".join(output[-3:]) or "no output"
                raise ConsoleTimeout(f"DUT gave no final line for `{command}` within {timeout_s:g} s ({tail})")
            output.append(line)
            final = parse_final_line(line)
            if final is None:
                continue
            if final.kind == "BOOT":
                if boot_is_answer:
                    return CommandReply(command, final, output)
                raise DutError(f"DUT rebooted while running `{command}`")
            if final.command != name:
                continue
            if final.kind == "ERR" or accept is None or accept(final):
                return CommandReply(command, final, output)

    def wait_finals(self, command: str, count: int, timeout_s: float) -> list[CommandReply]:
        """Collects the next `count` final lines of `command` (e.g. two concurrent iperf tests)."""
        deadline = time.monotonic() + timeout_s
        return [self.wait_final(command, max(0.1, deadline - time.monotonic())) for _ in range(count)]

    def command(
        self, line: str, timeout_s: float = 5.0, accept: Callable[[FinalLine], bool] | None = None
    ) -> CommandReply:
        """Sends `line` and returns its output up to its final line."""
        self.send(line)
        return self.wait_final(line, timeout_s, accept)

    def run_ok(self, line: str, timeout_s: float = 5.0, accept: Callable[[FinalLine], bool] | None = None) -> FinalLine:
        """Runs a command that must succeed; an ERR reply is a DUT fault naming the reason."""
        reply = self.command(line, timeout_s, accept)
        if not reply.final.ok:
            raise DutError(f"DUT refused `{line}`: {reply.final.reason}")
        return reply.final

    def wait_text(self, pattern: str, timeout_s: float) -> str:
        """Waits for an output line matching `pattern` (e.g. a server's 'listening' line); an ERR
        line on the way is a DUT fault."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout_s
        seen: list[str] = []
        while (line := self.next_line(max(0.0, deadline - time.monotonic()), repr(pattern))) is not None:
            seen.append(line)
            if line.startswith("ERR "):
                raise DutError(f"DUT refused: {line}")
            if regex.search(line):
                return line
        tail = " | ".join(seen[-3:]) or "no output"
        raise ConsoleTimeout(f"DUT printed nothing matching {pattern!r} within {timeout_s:g} s ({tail})")

    def identify(self, timeout_s: float) -> FinalLine:
        """Asks `version` until the DUT answers (its boot banner may have been lost when the port
        was opened; a banner is an answer too)."""
        deadline = time.monotonic() + timeout_s
        while (remaining := deadline - time.monotonic()) > 0:
            self.send("version")
            try:
                return self.wait_final("version", min(1.0, remaining), boot_is_answer=True).final
            except ConsoleTimeout:
                continue
        raise ConsoleTimeout(f"DUT did not answer `version` on {self.source.name} within {timeout_s:g} s")
