"""The console driver over pytest-embedded's DUT (``dut.write`` / ``dut.expect``): the HIL tests'
console, on a board's USB serial port or the virtual DUT's pseudo-terminal."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

import pexpect

from hil.console.driver import CommandReply, ConsoleDriver
from hil.errors import DutError

__all__ = ["CommandReply", "EmbeddedConsole", "ExpectingDut"]

LINE = re.compile(rb"[^\r\n]*\r?\n")  # every complete line: output and final lines


class ExpectingDut(Protocol):
    """What the driver needs of a pytest-embedded Dut."""

    def write(self, s: str) -> None: ...

    def expect(self, pattern: object, **kwargs: object) -> re.Match[bytes]: ...


class ExpectSource:
    name = "the DUT's console (pytest-embedded)"

    def __init__(self, dut: ExpectingDut) -> None:
        self.dut = dut

    def send(self, line: str) -> None:
        self.dut.write(line)  # pytest-embedded appends the line ending

    def read_line(self, timeout_s: float) -> str | None:
        try:
            match = self.dut.expect(LINE, timeout=timeout_s)
        except pexpect.TIMEOUT:
            return None
        except pexpect.EOF:
            raise DutError("DUT console closed") from None
        return match.group(0).decode("ascii", errors="replace").rstrip("\r\n")


class EmbeddedConsole(ConsoleDriver):
    def __init__(self, dut: ExpectingDut, alive: Callable[[], bool] | None = None) -> None:
        self.expect_source = ExpectSource(dut)
        super().__init__(self.expect_source, alive)

    @property
    def dut(self) -> ExpectingDut:
        """pytest-embedded's DUT the console reads (its log file, for evidence)."""
        return self.expect_source.dut
