"""The firmware console protocol over pytest-embedded's DUT (``dut.write`` / ``dut.expect``).

The same driver serves a board's USB serial port and the virtual DUT's pseudo-terminal. While
waiting for a final line it checks, once a second, that the DUT is still alive, and it treats a
boot banner in the middle of a command as a reset: both are DUT faults, not timeouts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import pexpect

from hil.console_protocol import FinalLine, parse_final_line
from hil.errors import ConsoleTimeout, DutError

LINE = re.compile(rb"[^\r\n]*\r?\n")  # every complete line: output and final lines
POLL_S = 1.0


class ExpectingDut(Protocol):
    """What the driver needs of a pytest-embedded Dut."""

    def write(self, s: str) -> None: ...

    def expect(self, pattern: object, **kwargs: object) -> re.Match[bytes]: ...


@dataclass
class CommandReply:
    command: str
    final: FinalLine
    output: list[str] = field(default_factory=list)


class EmbeddedConsole:
    def __init__(self, dut: ExpectingDut, alive: Callable[[], bool] | None = None) -> None:
        self.dut = dut
        self.alive = alive or (lambda: True)

    def send(self, line: str) -> None:
        self.dut.write(line)  # pytest-embedded appends the line ending

    def wait_final(
        self,
        command: str,
        timeout_s: float,
        accept: Callable[[FinalLine], bool] | None = None,
        boot_is_answer: bool = False,
    ) -> CommandReply:
        name = command.split()[0]
        output: list[str] = []
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ConsoleTimeout(f"DUT gave no final line for `{command}` within {timeout_s:g} s")
            try:
                match = self.dut.expect(LINE, timeout=min(POLL_S, remaining))
            except pexpect.TIMEOUT:
                if not self.alive():
                    raise DutError(f"DUT died while running `{command}`") from None
                continue
            except pexpect.EOF:
                raise DutError(f"DUT console closed while running `{command}`") from None
            line = match.group(0).decode("ascii", errors="replace").rstrip("\r\n")
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
        replies = []
        for _ in range(count):
            replies.append(self.wait_final(command, max(0.1, deadline - time.monotonic())))
        return replies

    def command(
        self, line: str, timeout_s: float = 5.0, accept: Callable[[FinalLine], bool] | None = None
    ) -> CommandReply:
        self.send(line)
        return self.wait_final(line, timeout_s, accept)

    def run_ok(self, line: str, timeout_s: float = 5.0, accept: Callable[[FinalLine], bool] | None = None) -> FinalLine:
        """Runs a command that must succeed; an ERR reply is a DUT fault naming the reason."""
        reply = self.command(line, timeout_s, accept)
        if not reply.final.ok:
            raise DutError(f"DUT refused `{line}`: {reply.final.reason}")
        return reply.final

    def wait_text(self, pattern: str, timeout_s: float) -> str:
        """Waits for an output line matching `pattern` (e.g. a server's 'listening' line)."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout_s
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                match = self.dut.expect(LINE, timeout=min(POLL_S, remaining))
            except pexpect.TIMEOUT:
                if not self.alive():
                    raise DutError(f"DUT died while waiting for {pattern!r}") from None
                continue
            line = match.group(0).decode("ascii", errors="replace").rstrip("\r\n")
            if line.startswith("ERR "):
                raise DutError(f"DUT refused: {line}")
            if regex.search(line):
                return line
        raise ConsoleTimeout(f"DUT printed nothing matching {pattern!r} within {timeout_s:g} s")

    def identify(self, timeout_s: float) -> FinalLine:
        """Asks `version` (the boot banner may have been lost when the port was opened)."""
        deadline = time.monotonic() + timeout_s
        while (remaining := deadline - time.monotonic()) > 0:
            self.send("version")
            try:
                return self.wait_final("version", min(2.0, remaining), boot_is_answer=True).final
            except ConsoleTimeout:
                continue
        raise ConsoleTimeout(f"DUT did not answer `version` within {timeout_s:g} s")
