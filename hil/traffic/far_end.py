"""The far end: the only thing a scenario talks to. Where the PC's traffic ends — the DUT's own
console (a DUT that ends the traffic) or the peer host behind a DUT in the path — with every
operation a scenario asks of it: iperf flows (it is an Endpoint, hil.traffic.endpoints), ping and
flood ping towards the PC, both directions at once, the stress profiles' streams. Implemented
once for a host (namespace, local or SSH: `HostFarEnd`) and once over a console dialect
(`ConsoleFarEnd`: the dialect driver's own operations, e.g. the project firmware's `bidir` and
`streams`); what a dialect cannot do is a declared capability (`lacks`), never a question
of which class sits behind the far end.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Literal, Protocol

from hil.console.dialects.capabilities import NotApplicable
from hil.tools.iperf3 import Iperf3Server
from hil.tools.ping import PingStats, ping_argv, run_ping
from hil.traffic.endpoints import (
    Endpoint,
    FlowSpec,
    Generator,
    HostEndpoint,
    Receiving,
    SenderReport,
    tcp_segment_counters,
)
from hil.traffic.roles import BidirResult, PcSide, pc_endpoint, run_bidir_hosts
from hil.traffic.stream_runs import Ends, streams_between_hosts

if TYPE_CHECKING:
    from hil.console.dialects.base import DialectDriver
    from hil.traffic.streams import StreamProfile

Proto = Literal["tcp", "udp"]
FLOOD_PER_S = 1000  # a console flood's request count per second of the profile's flood time


class FarEnd(Endpoint, Protocol):
    generator: Generator | None  # the generator PC <-> far end (None: the first both speak)
    behind_dut: bool  # a peer host the DUT forwards to (the DUT's health is the traffic's)
    ping_resolution_ms: float | None  # the step of the round-trip times its ping prints (None: iputils')

    def lacks(self, feature: str) -> str | None:
        """Why the far end cannot do `feature` (hil.console.dialects.capabilities.FEATURES), None when it can."""
        ...

    def ping(self, target: str, count: int, interval_s: float, timeout_s: float) -> tuple[PingStats, str]:
        """The far end pings `target` (the PC)."""
        ...

    def flood_ping(self, target: str, seconds: float, size: int, timeout_s: float) -> tuple[PingStats, str]:
        """A flood towards `target`: requests sent on each reply for `seconds`, `size` bytes of payload."""
        ...

    def bidir(
        self, proto: Proto, duration_s: float, rate_mbps: float | None, pc: PcSide, length: int | None,
        amount: str | None,
    ) -> BidirResult:  # fmt: skip
        """Both directions at once between the PC and the far end."""
        ...

    def streams(self, pc: PcSide, profile: StreamProfile, duration_s: float) -> tuple[Ends, dict[str, str]]:
        """The stress profile's streams between the PC and the far end."""
        ...

    def iperf3_server(self, port: int, name: str) -> AbstractContextManager[object]:
        """An iperf 3 server on the far end for a client the scenario runs itself (its JSON kept as `name`)."""
        ...

    def tcp_counters(self) -> dict[str, int] | None:
        """The far end's own TCP segment counters (OutSegs, RetransSegs) where it is a host; None for
        a DUT, whose counters come through its console (hil.results.dut_side)."""
        ...


class HostFarEnd(HostEndpoint):
    """The peer host behind a DUT in the path: iperf 2 and 3, iputils ping, stream peers."""

    generator: Generator | None = "iperf3"  # host to host: iperf 3 (the thesis's)
    behind_dut = True
    ping_resolution_ms: float | None = None

    def lacks(self, feature: str) -> str | None:
        return None

    def ping(self, target: str, count: int, interval_s: float, timeout_s: float) -> tuple[PingStats, str]:
        return run_ping(ping_argv(self.netns_prefix, target, count=count, interval_s=interval_s), timeout_s)

    def flood_ping(self, target: str, seconds: float, size: int, timeout_s: float) -> tuple[PingStats, str]:
        return run_ping(ping_argv(self.netns_prefix, target, flood=True, size=size, deadline_s=seconds), timeout_s)

    def bidir(
        self, proto: Proto, duration_s: float, rate_mbps: float | None, pc: PcSide, length: int | None,
        amount: str | None,
    ) -> BidirResult:  # fmt: skip
        return run_bidir_hosts(proto, duration_s, rate_mbps, pc, self, length, amount)

    def streams(self, pc: PcSide, profile: StreamProfile, duration_s: float) -> tuple[Ends, dict[str, str]]:
        return streams_between_hosts(pc_endpoint(pc), self, profile, duration_s)

    def iperf3_server(self, port: int, name: str) -> AbstractContextManager[object]:
        self.workdir.mkdir(parents=True, exist_ok=True)
        return Iperf3Server(self.netns_prefix, port, self.workdir / f"iperf3-server-{name}.json")

    def tcp_counters(self) -> dict[str, int] | None:
        return tcp_segment_counters(self.netns_prefix)


class ConsoleFarEnd:
    """The DUT's own programs through its console, in its dialect (hil.console.dialects): its
    iperf as the flows' endpoint, its ping, and what else the dialect declares."""

    generator: Generator | None = None
    behind_dut = False
    is_dut = True

    def __init__(self, driver: DialectDriver, name: str, ip: str) -> None:
        self.driver = driver
        self.endpoint = driver.endpoint(name, ip)
        self.name, self.ip = name, ip
        self.generators = self.endpoint.generators
        self.answers_udp_fin = self.endpoint.answers_udp_fin
        self.ping_resolution_ms: float | None = driver.ping_resolution_ms

    @property
    def label(self) -> str:
        return self.name.lower()

    # --- an Endpoint: the dialect's iperf ---------------------------------------------------------
    def receive(self, flow: FlowSpec, generator: Generator) -> AbstractContextManager[Receiving]:
        return self.endpoint.receive(flow, generator)

    def send(self, flow: FlowSpec, to: str, generator: Generator) -> SenderReport:
        return self.endpoint.send(flow, to, generator)

    def abort(self) -> None:
        self.endpoint.abort()

    # --- the other operations, as far as the dialect has them --------------------------------------
    def lacks(self, feature: str) -> str | None:
        if feature == "ping" and (missing := self.driver.ping_missing()) is not None:
            return missing
        return self.driver.info.not_applicable(frozenset({feature}))

    def _require(self, feature: str) -> None:
        if (why := self.lacks(feature)) is not None:
            raise NotApplicable(why)

    def ping(self, target: str, count: int, interval_s: float, timeout_s: float) -> tuple[PingStats, str]:
        self._require("ping")
        return self.driver.ping(target, count, interval_s, timeout_s)

    def flood_ping(self, target: str, seconds: float, size: int, timeout_s: float) -> tuple[PingStats, str]:
        self._require("ping_flood")
        return self.driver.flood_ping(target, max(10, int(seconds * FLOOD_PER_S)), size, timeout_s)

    def bidir(
        self, proto: Proto, duration_s: float, rate_mbps: float | None, pc: PcSide, length: int | None,
        amount: str | None,
    ) -> BidirResult:  # fmt: skip
        self._require("concurrent")
        if amount is not None:
            raise NotApplicable("not applicable: both directions by data size run between two hosts only")
        return self.driver.bidir(self.ip, proto, duration_s, rate_mbps, pc, length)  # type: ignore[attr-defined]

    def streams(self, pc: PcSide, profile: StreamProfile, duration_s: float) -> tuple[Ends, dict[str, str]]:
        self._require("streams")
        return self.driver.streams(self.ip, pc, profile, duration_s)  # type: ignore[attr-defined]

    def iperf3_server(self, port: int, name: str) -> AbstractContextManager[object]:
        raise NotApplicable(f"not applicable: the DUT's console ({self.driver.info.name}) runs no iperf 3 server")

    def tcp_counters(self) -> dict[str, int] | None:
        return None
