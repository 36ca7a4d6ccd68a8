"""Nagle's algorithm on and off at small writes (seed 002: the ezTCP modules' "TCP transmission delay"
switch took one module from 49.8 % to 100 % of its nominal rate): a sender paced at a low rate with
small writes, its Nagle on (the default) and off (TCP_NODELAY: iperf -N on the PC's sender, the
firmware's iperf client -N on the DUT's), each way.

What the construction fixes is how the writes leave: with Nagle off each write is sent at once, one
segment per write; with it on a small segment waits while earlier data is unacknowledged, so the
writes of one round trip leave together. The round trip is the firmware's link delay line's
(`window_dut_delay_ms`: every frame the DUT receives held, the ACKs it gets included), the same on
any machine: 20 ms gathers about 8 writes of 64 B at 0.2 Mbit/s, into one segment with Nagle on. The
DUT counts the data segments it sends and receives itself (`stats`: tcp_tx_segs, tcp_rx_segs), so
segments per write is measured on any DUT kind and machine; its limits are the family's check.
Goodput is shown against the offered rate (the ezTCP method's "performance")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import allure

from hil.checks import criteria
from hil.console.dialects.capabilities import NotApplicable
from hil.results.recorder import CaseRecord
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.metrics import DIRECTION, IPERF3, THROUGHPUT, ScenarioShape
from hil.scenarios.sweep import Point, attach_text, check, measure
from hil.session import NoDelayLine
from hil.traffic.roles import TrafficSpec

if TYPE_CHECKING:
    from hil.session import HilContext

WRITE_BYTES = 64  # the small write (a serial-to-Ethernet module's few characters)
# 391 writes of 64 B a second: 7.8 per 20 ms round trip, fewer than a sender's initial congestion window
# (Linux: 10 segments; lwIP: 4 x MSS bytes), so with Nagle off every write can leave at once
OFFERED_MBPS = 0.2
NAGLE = frozenset({"segments_per_write", "writes", "segments"})


@dataclass(frozen=True)
class NaglePoint:
    direction: Literal["dut_rx", "dut_tx"]
    nagle: bool  # True: Nagle's algorithm on (the sockets' default)

    @property
    def case(self) -> str:
        return f"{self.direction}-{'on' if self.nagle else 'off'}"


@register
class NagleStudy:
    name = "Nagle's algorithm at small writes"
    marker = "nagle"
    marker_doc = "Nagle's algorithm on and off at small paced writes (TCP_NODELAY, iperf -N), segments per write"
    shapes = (ScenarioShape("nagle", rf"{DIRECTION}-(?:on|off)", THROUGHPUT | IPERF3 | NAGLE, "dut_tx-off"),)
    # off: every write its own segment (a few merged when the sender's thread wakes late); on: the
    # writes of a round trip (about 8) in one segment
    default_limits: ClassVar = {
        "nagle": {
            "dut_rx-off": {"min_segments_per_write": 0.7},
            "dut_tx-off": {"min_segments_per_write": 0.7},
            "dut_rx-on": {"max_segments_per_write": 0.35},
            "dut_tx-on": {"max_segments_per_write": 0.35},
        }
    }

    def cases(self, bench: BenchFacts) -> list[Case]:
        """Both directions, Nagle on and off: the DUT counts the segments (its `stats`), and
        sends with its own client's -N where it is the sender."""
        out = []
        for direction in ("dut_rx", "dut_tx"):
            for nagle in (True, False):
                p = NaglePoint(direction, nagle)  # type: ignore[arg-type]
                needs = {"tcp_counters", "client_amount"} | (
                    {"nodelay"} if direction == "dut_tx" and not nagle else set()
                )
                out.append(Case(self, f"nagle/{p.case}", p, needs=frozenset(needs), topology="endpoint"))
        return out

    def run(self, hil: HilContext, case: Case) -> None:
        nagle_point(hil, case.point)  # type: ignore[arg-type]


def nagle_point(hil: HilContext, p: NaglePoint) -> None:
    scenario = "nagle"
    limits = hil.thresholds.limits(scenario, p.case)
    counters = hil.dut.counters()
    if counters is not None and "tcp_tx_segs" not in counters:  # e.g. the ESP32 port on ESP-IDF's lwIP
        raise NotApplicable("the DUT's `stats` counts no TCP segments (no tcp_tx_segs: its lwIP is not the "
                            "project's, whose fw_tcp_track.c counts them)")  # fmt: skip
    allure.dynamic.feature("Nagle's algorithm at small writes")
    allure.dynamic.story(f"nagle {p.direction}")
    # a byte count (-n) of whole writes at the paced rate for about the case's duration
    writes = max(100, round(OFFERED_MBPS * 1e6 / 8 * hil.duration_s / WRITE_BYTES))
    spec = TrafficSpec("tcp", p.direction, hil.duration_s, length=WRITE_BYTES, rate_mbps=OFFERED_MBPS,
                       amount=str(writes * WRITE_BYTES), nodelay=not p.nagle)  # fmt: skip
    sender = "the DUT's client" if p.direction == "dut_tx" else "the PC's iperf"
    setting = "on (the default)" if p.nagle else f"off ({sender} with -N)"
    point = Point(p.case, spec, OFFERED_MBPS, x=0.0 if p.nagle else 1.0,
                  extra={"nagle": p.nagle, "write_bytes": WRITE_BYTES})  # fmt: skip
    delay_ms = hil.profile.window_dut_delay_ms
    try:
        with hil.delayed_ingress(delay_ms) as rtt_ms:  # the ACKs held one round trip on any machine
            point.extra |= {"delay_ms": delay_ms, "ping_rtt_ms": round(rtt_ms, 3)}
            rec = measure(hil, scenario, point)
    except NoDelayLine as exc:
        attach_text("delay line", f"{exc}: the writes meet the bench link's own round trip")
        rec = measure(hil, scenario, point)
    attach_text(f"{p.case}: writes and segments", _explain(rec, setting))
    allure.dynamic.title(
        f"nagle/{p.case}: Nagle {setting}, {WRITE_BYTES}-byte writes at {OFFERED_MBPS:g} Mbit/s: "
        f"{_per_write(rec)}, {rec.median:.3f} Mbit/s = {rec.efficiency_pct or 0:.1f} % of offered; "
        f"{criteria(rec.metrics(), limits)}"
    )
    if not p.nagle:  # the second of its direction's pair
        _attach_pair(hil, p.direction)
    check(hil, scenario, [rec])


def _per_write(rec: CaseRecord) -> str:
    m = rec.measured
    if "segments_per_write" not in m:
        return "segments not counted"
    return f"{m['segments']:.0f} segments for {m['writes']:.0f} writes ({m['segments_per_write']:.3f} a write)"


def _explain(rec: CaseRecord, setting: str) -> str:
    return (
        f"Nagle {setting}; {WRITE_BYTES}-byte writes paced at {OFFERED_MBPS:g} Mbit/s\n"
        f"{_per_write(rec)} (the DUT's own count of the flow's data segments)\n"
        f"goodput {rec.median:.3f} Mbit/s = {rec.efficiency_pct or 0:.1f} % of the offered rate\n"
    )


def _attach_pair(hil: HilContext, direction: str) -> None:
    """Both settings of a direction side by side, once both were measured in this run."""
    by = {r.case: r for r in hil.recorder.latest("nagle") if r.case.startswith(direction)}
    on, off = by.get(f"{direction}-on"), by.get(f"{direction}-off")
    if on is None or off is None:
        return
    rows = [f"{'Nagle':<6s} {'segments':>9s} {'writes':>7s} {'per write':>10s} {'Mbit/s':>8s} {'% offered':>10s}"]
    for name, r in (("on", on), ("off", off)):
        m = r.measured
        per = m.get("segments_per_write", 0)
        rows.append(f"{name:<6s} {m.get('segments', 0):9.0f} {m.get('writes', 0):7.0f} {per:10.3f} {r.median:8.3f} "
                    f"{r.efficiency_pct or 0:10.1f}")  # fmt: skip
    ratio = off.measured.get("segments_per_write", 0) / max(on.measured.get("segments_per_write", 0), 1e-9)
    rows.append(f"\nwith Nagle off the sender sends {ratio:.1f}x the segments per write")
    attach_text(f"nagle {direction}: on against off", "\n".join(rows) + "\n")
