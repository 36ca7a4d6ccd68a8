"""The `hil-fw` dialect: the project's own firmware, whose every command ends with one final line
(`RESULT <cmd> key=value ...` / `ERR <cmd> <reason>`, hil.console.protocol)."""

from __future__ import annotations

from hil.console.dialects.capabilities import INFO
from hil.console.driver import ConsoleDriver
from hil.console.protocol import FinalLine
from hil.errors import DutError
from hil.tools.ping import PingStats, parse_console
from hil.traffic.endpoints import DutConsoleEndpoint, Endpoint


class HilFwDriver:
    info = INFO["hil-fw"]
    ping_resolution_ms = 0.001  # its ping prints microseconds (3 decimals of ms)

    def __init__(self, console: ConsoleDriver) -> None:
        self.console = console

    def identify(self, timeout_s: float) -> FinalLine:
        return self.console.identify(timeout_s)

    def endpoint(self, name: str, ip: str) -> Endpoint:
        return DutConsoleEndpoint(name, self.console, ip)  # type: ignore[arg-type]

    def ping_missing(self) -> str | None:
        return None

    def _ping(self, line: str, timeout_s: float) -> tuple[PingStats, str]:
        reply = self.console.command(line, timeout_s=timeout_s)
        if not reply.final.ok:
            raise DutError(f"DUT refused `{line}`: {reply.final.reason}")
        return parse_console(reply.output, reply.final), "\n".join([*reply.output, reply.final.text])

    def ping(self, target: str, count: int, interval_s: float, timeout_s: float) -> tuple[PingStats, str]:
        return self._ping(f"ping {target} -c {count} -i {interval_s:g} -W 1", timeout_s)

    def flood_ping(self, target: str, count: int, size: int, timeout_s: float) -> tuple[PingStats, str]:
        # -i 0 sends on each reply; -q keeps the flood from being paced by the console (ping -f)
        return self._ping(f"ping {target} -c {count} -i 0 -s {size} -W 1 -q", timeout_s)

    def abort_running(self) -> None:
        for abort in ("iperf -a", "ping -a", "stream -a"):
            self.console.run_ok(abort, 10, accept=lambda f: "action" in f.fields)

    def snapshot(self) -> str | None:
        final = self.console.run_ok("stats", 10)
        return "\n".join(f"{k} = {v}" for k, v in final.fields.items())

    def facts(self) -> dict[str, object]:
        return {}
