"""The `hil-fw` dialect: the project's own firmware, whose every command ends with one final line
(`RESULT <cmd> key=value ...` / `ERR <cmd> <reason>`, hil.console.protocol)."""

from __future__ import annotations

from typing import Literal

from hil.config.sections import NetworkConfig, WifiConfig
from hil.console.background_ping import ConsolePing
from hil.console.dialects.base import LinkFacts, RadioReading
from hil.console.dialects.capabilities import FEATURES, DialectInfo, NotApplicable
from hil.console.dialects.hil_fw_wifi import SoftApLink, WifiLink, ensure_connected, ensure_softap
from hil.console.dialects.hil_fw_wifi import radio as wifi_radio
from hil.console.dialects.registry import register_dialect
from hil.console.driver import ConsoleDriver
from hil.console.protocol import FinalLine
from hil.errors import DutError
from hil.tools.ping import PingStats, parse_console
from hil.traffic.endpoints import DutConsoleEndpoint, Endpoint
from hil.traffic.roles import BidirResult, DutSide, PcSide, pc_endpoint, run_bidir, run_bidir_duts
from hil.traffic.stream_runs import Ends, streams_between_consoles, streams_with_console
from hil.traffic.streams import StreamProfile


@register_dialect
class HilFwDriver:
    info = DialectInfo("hil-fw", "the project's firmware", frozenset(FEATURES))
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

    def background_ping(self, target: str, expected_s: float) -> ConsolePing:
        """A ping beside this console's iperf for about `expected_s` (latency under load DUT to DUT:
        the firmware runs a ping beside its iperf tests, `fw_test_slot.c`)."""
        return ConsolePing(self.console, target, expected_s)

    def flood_ping(self, target: str, count: int, size: int, timeout_s: float) -> tuple[PingStats, str]:
        # -i 0 sends on each reply; -q keeps the flood from being paced by the console (ping -f)
        return self._ping(f"ping {target} -c {count} -i 0 -s {size} -W 1 -q", timeout_s)

    def bidir(
        self, ip: str, proto: Literal["tcp", "udp"], duration_s: float, rate_mbps: float | None, pc: PcSide,
        length: int | None,
    ) -> BidirResult:  # fmt: skip
        """Both directions at once (`concurrent`): its iperf server and client together, with the
        PC's, or with its partner's on a DUT-to-DUT bench (the project's console on both)."""
        near = getattr(pc.near, "driver", None)
        if near is not None:
            if not isinstance(near, HilFwDriver):
                raise NotApplicable(
                    f"not applicable: both directions DUT to DUT need the project's console on both DUTs "
                    f"(the partner speaks {near.info.name})"
                )
            return run_bidir_duts(proto, duration_s, rate_mbps, DutSide(self.console, ip),
                                  DutSide(near.console, pc.near.ip), length)  # type: ignore[union-attr]  # fmt: skip
        return run_bidir(proto, duration_s, rate_mbps, pc, DutSide(self.console, ip), length)  # type: ignore[arg-type]

    def streams(self, ip: str, pc: PcSide, profile: StreamProfile, duration_s: float) -> tuple[Ends, dict[str, str]]:
        """The stress profiles' streams (`streams`): its `stream` command sends and counts its own,
        with the PC's stream peer, or with its partner's `stream` command on a DUT-to-DUT bench
        (the project's console on both)."""
        partner, near = pc.near, getattr(pc.near, "driver", None)
        if partner is not None and near is not None:
            if not isinstance(near, HilFwDriver):
                raise NotApplicable(
                    f"not applicable: the stress streams DUT to DUT need the project's console on both DUTs "
                    f"(the partner speaks {near.info.name})"
                )
            ends = (DutSide(self.console, ip), DutSide(near.console, partner.ip))  # type: ignore[arg-type]
            return streams_between_consoles(*ends, partner.name, profile, duration_s)
        return streams_with_console(self.console, ip, pc_endpoint(pc), profile, duration_s)

    def abort_running(self) -> None:
        for abort in ("iperf -a", "ping -a", "stream -a"):
            self.console.run_ok(abort, 10, accept=lambda f: "action" in f.fields)

    def join_wifi(self, wifi: WifiConfig, net: NetworkConfig, joined: LinkFacts | None) -> WifiLink:
        """`wifi status` first: joins unless already joined with the bench file's SSID and address."""
        return ensure_connected(self.console, wifi, net)

    def start_softap(self, wifi: WifiConfig, net: NetworkConfig) -> SoftApLink:
        """`wifi status` first: starts the SoftAP unless it runs with the bench file's SSID and address."""
        return ensure_softap(self.console, wifi, net)

    def radio(self, wifi: WifiConfig) -> RadioReading:
        return wifi_radio(self.console)

    def stats(self) -> tuple[str | None, dict[str, int] | None]:
        fields = self.console.run_ok("stats", 10).fields
        text = "\n".join(f"{k} = {v}" for k, v in fields.items())
        return text, {k: int(v) for k, v in fields.items() if str(v).isdigit()}

    def counters(self, mark: bool = False) -> dict[str, int] | None:
        final = self.console.command("stats mark", 10).final if mark else None
        if final is None or not final.ok:  # an image older than `stats mark`: its marks run since boot
            final = self.console.run_ok("stats", 10)
        fields = final.fields
        return {k: int(v) for k, v in fields.items() if str(v).isdigit()}

    def facts(self) -> dict[str, object]:
        return {}
