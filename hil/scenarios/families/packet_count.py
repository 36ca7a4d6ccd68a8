"""Exact packet counts (seed 003, the WLAN study: docs/references.md#seed-003---the-wlan-study):
a fixed number of UDP datagrams per test at IP datagram sizes 100, 500, 1000 and 1500 bytes, in
both directions, every datagram numbered (iperf's sequence numbers), so the receiver says exactly
how many of the sent ones arrived: `count/dut_rx-ip1500`. The study's sender ran as fast as it
could (its finding: fast senders overrun slow receivers); here the datagrams are paced at a fixed
packet rate (PACKETS_PER_S; the count, not the rate, is what is measured: a short test's sender
rate is recorded, never a bench fault), so the count is exact and the loss is the path's and the DUT's, not
the sender's: what is lost is counted, never estimated from bytes.

The family is one definition: its cases, its run, its default limits (no datagram lost; a bench's
threshold file overrides them under `count:`), nothing else to register.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import allure

from hil.checks import criteria
from hil.console.dialects.capabilities import NotApplicable
from hil.directions import direction_name
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.metrics import DIRECTION, ScenarioShape
from hil.scenarios.sweep import attach_text, check, confirm_miss
from hil.stats import summarize
from hil.tools.ping import answers_ping
from hil.traffic.roles import TrafficResult, TrafficSpec, run_traffic

if TYPE_CHECKING:
    from hil.session import HilContext

IP_UDP_HEADERS = 28  # an IPv4 header (20) and a UDP header (8): the payload is the IP size less these
PACKETS_PER_S = 2000  # the sender's pace (1500-byte datagrams: 23.5 Mbit/s, within every bench's link)
POINTS = {"quick": ((100, 1500), 1000), "full": ((100, 500, 1000, 1500), 10_000)}  # (IP sizes, packets)
COUNTS = frozenset({"loss_pct", "sent", "received", "lost"})
# iperf 2 at both ends, also between two hosts: its server waits for the client's last datagram;
# iperf 3's server stops counting when the test ends, before the last datagrams in flight (they
# would be neither received nor lost: 998 of 1000 counted through the virtual bridge)
COUNTING_GENERATOR = "iperf2"


@dataclass(frozen=True)
class CountPoint:
    direction: str  # dut_rx / dut_tx (the traffic's role)
    ip_size: int  # the IP datagram's size in bytes
    packets: int

    @property
    def payload(self) -> int:
        return self.ip_size - IP_UDP_HEADERS


@register
class PacketCount:
    name = "exact packet counts (UDP, numbered datagrams)"
    marker = "count"
    marker_doc = "a fixed number of numbered UDP datagrams per IP size and direction, counted exactly"
    shapes = (ScenarioShape("count", rf"{DIRECTION}-ip\d+", COUNTS, "dut_rx-ip1500"),)
    default_limits: ClassVar = {"count": {"default": {"max_lost": 0}}}

    def cases(self, bench: BenchFacts) -> list[Case]:
        sizes, packets = POINTS[bench.profile.name]
        return [
            Case(self, f"count/{direction_name(d, bench.in_path)}-ip{n}", CountPoint(d, n, packets),
                 needs=frozenset({"client_amount"}) if d == "dut_tx" else frozenset())
            for d in ("dut_rx", "dut_tx")
            for n in sizes
        ]  # fmt: skip

    def run(self, hil: HilContext, case: Case) -> None:
        count_packets(hil, case.point)  # type: ignore[arg-type]


def numbered(r: TrafficResult, packets: int) -> int:
    """The datagrams the receiver numbered (from the sender's sequence numbers). iperf 2's server
    also counts the client's closing datagram (its negative sequence number): one more than sent."""
    counted = r.datagrams or 0
    return packets if counted == packets + 1 else counted


def count_packets(hil: HilContext, point: CountPoint) -> None:
    key = f"{hil.direction(point.direction)}-ip{point.ip_size}"
    limits = hil.thresholds.limits("count", key)  # none: an error before any traffic
    allure.dynamic.feature(PacketCount.name)
    allure.dynamic.story(f"count {hil.direction(point.direction)}")
    rec = measure_counts(hil, point, key)
    allure.dynamic.title(
        f"count/{key}: {point.packets} datagrams of {point.ip_size} B (IP) at {PACKETS_PER_S}/s: "
        f"{rec.measured['lost']:.0f} lost at worst; {criteria(rec.metrics(), limits)}"
    )
    short = [s for s in rec.extra["sent_per_run"] if s != point.packets]  # type: ignore[attr-defined]
    assert not short, f"the receiver numbered {short} datagrams where {point.packets} were sent: the count is not exact"
    try:
        check(hil, "count", [rec])
    except AssertionError as miss:  # a DUT on the bench PC: measured once more (--confirm-misses)
        confirm_miss(hil, "count", miss, lambda: measure_counts(hil, point, key))


def measure_counts(hil: HilContext, point: CountPoint, key: str) -> CaseRecord:
    """The point's datagrams sent `repeat` times, counted, recorded before any check."""
    rate = round(PACKETS_PER_S * point.ip_size * 8 / 1e6, 3)  # the IP datagrams' rate at the pace
    expected_s = point.packets / PACKETS_PER_S
    spec = TrafficSpec("udp", point.direction, expected_s, length=point.payload, rate_mbps=rate,  # type: ignore[arg-type]
                       amount=str(point.packets * point.payload))  # fmt: skip
    # both ends know each other's link address before the first datagram (a neighbour still to be
    # resolved queues only a few datagrams: a start-up effect, not the path's loss)
    answers_ping(hil.pc_side.netns_prefix, hil.far_end.ip)
    start = time.time()
    runs: list[TrafficResult] = []
    for i in range(1, hil.repeat + 1):
        r = run_traffic(spec, hil.pc_side, hil.far_end, COUNTING_GENERATOR)
        if r.datagrams is None or r.details.get("loss_from_bytes"):
            receiver = "PC" if point.direction == "dut_tx" else hil.far_end.name
            raise NotApplicable(f"not applicable: the {receiver}'s UDP server does not count numbered datagrams")
        for name, text in r.raw.items():
            attach_text(f"run {i}: {name}", text)
        runs.append(r)
    sent = [numbered(r, point.packets) for r in runs]
    lost = [r.lost or 0 for r in runs]
    loss = [100.0 * n / max(s, 1) for n, s in zip(lost, sent, strict=True)]
    rec = make_record("count", key, hil.dut.config.name, summarize(loss), None, unit="% lost")
    rec.loss_pct = max(rec.values)
    rec.measured.update(sent=float(min(sent)), received=float(min(s - n for s, n in zip(sent, lost, strict=True))),
                        lost=float(max(lost)))  # fmt: skip
    rec.extra.update(x=point.ip_size, packets=point.packets, payload=point.payload, pace_pps=PACKETS_PER_S,
                     sent_per_run=sent, lost_per_run=lost, offered_mbps=rate,
                     sender_mbps=[round(r.sender_mbps, 3) for r in runs])  # fmt: skip
    rec.traffic_s = round(sum(r.duration_s or expected_s for r in runs), 3)
    hil.recorder.record(rec, start, time.time())
    attach_text("counts", "\n".join(f"run {i}: {s} numbered, {s - n} received, {n} lost"
                                    for i, (s, n) in enumerate(zip(sent, lost, strict=True), 1)))  # fmt: skip
    return rec
