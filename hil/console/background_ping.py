"""A DUT's console pinging beside a measurement (latency under load DUT to DUT): the project's
console runs `ping` while its iperf runs (`concurrent`), so the partner of a DUT-to-DUT bench
probes the run's DUT where the PC would (hil.tools.ping.BackgroundPing). Whoever reads the console
meanwhile (the load's own wait for its iperf result) reads the ping's lines too; a listener keeps
them, and the ping's end is waited for after the load."""

from __future__ import annotations

import contextlib
from typing import Self

from hil.console.driver import ConsoleDriver
from hil.console.protocol import FinalLine, parse_final_line
from hil.errors import BenchError, DutError
from hil.tools.ping import PROBE_INTERVAL_S, PingStats, parse_console

REPLY_WAIT_S = 1  # each request's wait for its reply (-W): a lost one costs no more


class ConsolePing:
    """`ping TARGET -c N -i INTERVAL` on a console for about `expected_s`: started on entry, its
    lines kept while anyone reads the console, its end awaited on exit; `stats()` what it saw,
    `text` its lines with the command."""

    def __init__(self, console: ConsoleDriver, target: str, expected_s: float,
                 interval_s: float = PROBE_INTERVAL_S) -> None:  # fmt: skip
        self.console = console
        self.count = max(1, round(expected_s / interval_s))  # one request every interval of the load
        self.line = f"ping {target} -c {self.count} -i {interval_s:g} -W {REPLY_WAIT_S}"
        self.lines: list[str] = []
        self.text = ""
        self._final: FinalLine | None = None
        self._listening = console.listening(self._keep)

    def _keep(self, line: str, _at: float) -> None:
        self.lines.append(line)
        final = parse_final_line(line)
        if final is not None and final.command == "ping" and final.kind != "BOOT" and self._final is None:
            self._final = final

    def __enter__(self) -> Self:
        self._listening.__enter__()
        self.console.send(self.line)
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            if exc_type is None and self._final is None:  # its last replies may come after the load's end
                self.console.wait_final(self.line, timeout_s=self.count * REPLY_WAIT_S + 10)
            elif self._final is None:  # the load failed: the ping stops, the next case finds the console idle
                with contextlib.suppress(OSError, BenchError, DutError):  # a DUT that died: its case says so
                    self.console.send("ping -a")
        finally:
            self._listening.__exit__(None, None, None)
            self.text = "\n".join([f"> {self.line}", *self._ping_lines()])

    def _ping_lines(self) -> list[str]:
        return [line for line in self.lines if " bytes from " in line or line.startswith(("RESULT ping", "ERR ping"))]

    def stats(self) -> PingStats:
        """What the probe saw; a refusal or no end is the DUT's (DutError naming it)."""
        if self._final is None:
            raise DutError(f"the console's `{self.line}` gave no final line")
        if not self._final.ok:
            raise DutError(f"DUT refused `{self.line}`: {self._final.reason}")
        return parse_console([line for line in self.lines if " bytes from " in line], self._final)
