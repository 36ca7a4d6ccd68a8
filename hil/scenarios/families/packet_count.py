"""Exact packet counts (seed 003, the WLAN study: docs/references.md#seed-003---the-wlan-study):
a fixed number of packets per test at IP datagram sizes 100, 500, 1000 and 1500 bytes, UDP and
TCP, in both directions. UDP: every datagram numbered (iperf's sequence numbers), so the receiver
says exactly how many of the sent ones arrived (`count/udp-dut_rx-ip1500`). TCP: that many writes
of the size's payload (IP and TCP headers without options: 40 bytes), the receiver's byte count
exact, the wire's segments and retransmissions read from the capture (`count/tcp-dut_tx-ip100`:
TCP loses nothing, it resends). Each count is compared with the PC's capture (hil.wire). The
study's sender ran as fast as it could (its finding: fast senders overrun slow receivers); here
the packets are paced at a fixed rate (PACKETS_PER_S, less on a slow link: pace_pps; the count, not the rate, is what is
measured: a short test's sender rate is recorded, never a bench fault), so the count is exact
and the loss is the path's and the DUT's, not the sender's: what is lost is counted, never
estimated from bytes.

The family is one definition: its cases, its run, its default limits (no datagram lost; a bench's
threshold file overrides them under `count:`), nothing else to register.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import allure

from hil.checks import BenchFault, criteria
from hil.console.dialects.capabilities import NotApplicable
from hil.directions import direction_name
from hil.report.background_charts import attach_chart
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.charts import sweep_chart
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.metrics import DIRECTION, ScenarioShape
from hil.scenarios.sweep import add_wire, attach_text, check, confirm_miss
from hil.stats import summarize
from hil.tools.ping import answers_ping
from hil.traffic.roles import TrafficResult, TrafficSpec, run_traffic

if TYPE_CHECKING:
    from hil.session import HilContext
    from hil.wire.pcap_summary import WireSummary
    from hil.wire.watch import WireSeen

# an IPv4 header (20) and a UDP (8) or TCP header without options (20): the payload is the IP size less these
HEADERS = {"udp": 28, "tcp": 40}
PACKETS_PER_S = 2000  # the sender's pace (1500-byte datagrams: 23.5 Mbit/s), unless the link is slower:
PACE_LINK_SHARE = 0.9  # then the pace that fills this share of the link with the size's frames
WIRE_OVERHEAD_B = 38  # an Ethernet frame's bytes around its IP datagram, on the wire: header, FCS, preamble, gap
POINTS = {"quick": ((100, 1500), 1000), "full": ((100, 500, 1000, 1500), 10_000)}  # (IP sizes, packets)
COUNTS = frozenset({"loss_pct", "sent", "received", "lost", "retransmissions", "duplicates", "reordered"})
# iperf 2 at both ends, also between two hosts: its server waits for the client's last datagram;
# iperf 3's server stops counting when the test ends, before the last datagrams in flight (they
# would be neither received nor lost: 998 of 1000 counted through the virtual bridge)
COUNTING_GENERATOR = "iperf2"


@dataclass(frozen=True)
class CountPoint:
    proto: str  # udp / tcp
    direction: str  # dut_rx / dut_tx (the traffic's role)
    ip_size: int  # the IP datagram's size in bytes
    packets: int

    @property
    def payload(self) -> int:
        return self.ip_size - HEADERS[self.proto]

    @property
    def what(self) -> str:
        return "datagrams" if self.proto == "udp" else "TCP writes"


@register
class PacketCount:
    name = "exact packet counts (numbered UDP datagrams, TCP writes)"
    marker = "count"
    marker_doc = (
        "a fixed number of packets (numbered UDP datagrams, TCP writes) per IP size and direction, counted exactly"
    )
    shapes = (ScenarioShape("count", rf"(udp|tcp)-{DIRECTION}-ip\d+", COUNTS, "udp-dut_rx-ip1500"),)
    default_limits: ClassVar = {"count": {"default": {"max_lost": 0}}}

    def cases(self, bench: BenchFacts) -> list[Case]:
        sizes, packets = POINTS[bench.profile.points_name]
        return [
            Case(self, f"count/{proto}-{direction_name(d, bench.in_path)}-ip{n}", CountPoint(proto, d, n, packets),
                 needs=frozenset({"client_amount"}) if d == "dut_tx" else frozenset())
            for proto in ("udp", "tcp")
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


def pace_pps(link_mbit: float, ip_size: int) -> int:
    """Packets per second for `ip_size`-byte IP datagrams: PACKETS_PER_S, or on a link too slow for
    it (QEMU's 20 Mbit/s and 1500 bytes: 1,462/s) the pace that fills PACE_LINK_SHARE of it, so
    the count measures what the DUT and the path lose, not a shaper's queue overflowing."""
    fits = PACE_LINK_SHARE * link_mbit * 1e6 / ((ip_size + WIRE_OVERHEAD_B) * 8)
    return max(1, min(PACKETS_PER_S, int(fits)))


def count_packets(hil: HilContext, point: CountPoint) -> None:
    key = f"{point.proto}-{hil.direction(point.direction)}-ip{point.ip_size}"
    limits = hil.thresholds.limits("count", key)  # none: an error before any traffic
    allure.dynamic.feature(PacketCount.name)
    allure.dynamic.story(f"count {point.proto} {hil.direction(point.direction)}")
    measure_point = measure_counts if point.proto == "udp" else measure_tcp_counts
    rec = measure_point(hil, point, key)
    resent = f", {rec.measured['retransmissions']:.0f} segments resent" if "retransmissions" in rec.measured else ""
    pace = pace_pps(hil.link_mbit, point.ip_size)
    allure.dynamic.title(
        f"count/{key}: {point.packets} {point.what} of {point.ip_size} B (IP) at {pace}/s: "
        f"{rec.measured['lost']:.0f} lost at worst{resent}; {criteria(rec.metrics(), limits)}"
    )
    short = [s for s in rec.extra["sent_per_run"] if s != point.packets]  # type: ignore[attr-defined]
    assert not short, (
        f"the receiver counted {short} {point.what} where {point.packets} were sent: the count is not exact"
    )
    chart_loss_by_size(hil, point)
    try:
        check(hil, "count", [rec])
    except AssertionError as miss:  # a DUT on the bench PC: the majority of three trials (--confirm-misses)
        confirm_miss(hil, "count", miss, lambda: measure_point(hil, point, key))
    wire = rec.extra.get("capture_count")
    if isinstance(wire, dict) and wire.get("agrees") is False:  # the DUT met its limits: the bench's counts disagree
        raise BenchFault(f"the count disagrees with the capture: {wire['why']}")


def whole_pc_capture(seen: WireSeen) -> tuple[WireSummary | None, str]:
    """The PC's capture of the window when it holds every packet, else None and why a count is not
    compared with it."""
    summary = seen.summaries.get("pc")
    if summary is None:
        return None, "no capture on the PC's side"
    if not seen.complete:
        return None, f"the capture is not whole (cap reached, or missed {seen.missed}): not compared"
    return summary, ""


def capture_agreement(seen: WireSeen, hil: HilContext, point: CountPoint, port: int, sent: int, lost: int,
                      ) -> dict[str, object]:  # fmt: skip
    """The count against the PC's capture: the numbered datagrams on the PC's wire must be exactly
    those the PC sent (dut_rx: less what its shaper dropped before the capture point), or those
    its iperf received plus what its own socket dropped (dut_tx)."""
    summary, why_not = whole_pc_capture(seen)
    if summary is None:
        return {"agrees": None, "why": why_not}
    pc, far = hil.pc_side.ip, hil.far_end.ip
    src, dst = (pc, far) if point.direction == "dut_rx" else (far, pc)
    flows = [f for f in summary.udp_flows if (f.src, f.dst, f.dport) == (src, dst, port) and f.seq_format == "iperf2"]
    on_wire = sum(f.distinct for f in flows)
    d = seen.deltas
    if point.direction == "dut_rx":
        shaper = d.get("pc_qdisc", {}).get("drops", 0)
        expected, how = (
            sent - shaper,
            f"{sent} sent by the PC" + (f" less {shaper} its shaper dropped" if shaper else ""),
        )
    else:
        socket = d.get("pc_kernel", {}).get("UdpInErrors", 0)  # a full buffer's drops (RcvbufErrors) included
        expected = sent - lost + socket
        how = f"{sent - lost} received by the PC's iperf" + (f" + {socket} its socket dropped" if socket else "")
    agrees = on_wire == expected
    why = f"{on_wire} numbered datagrams on the PC's wire ({len(flows)} flows), {how}"
    out: dict[str, object] = {"agrees": agrees, "on_wire": on_wire, "expected": expected, "why": why}
    if point.direction == "dut_tx":  # the PC receives: duplicates and reordering as they reached it
        out.update(duplicates=sum(f.duplicates for f in flows), reordered=sum(f.reordered for f in flows))
    return out


def chart_loss_by_size(hil: HilContext, point: CountPoint) -> None:
    """After a direction's largest size: its loss against the IP datagram size (the WLAN study's
    finding: loss grows with size when a fast sender overruns a slow receiver)."""
    sizes, _ = POINTS[hil.profile.points_name]
    if point.ip_size != max(sizes):
        return
    direction = f"{point.proto}-{hil.direction(point.direction)}"
    rows = sorted(hil.recorder.latest("count", f"{direction}-ip"), key=lambda r: float(r.extra["x"]))  # type: ignore[arg-type]
    if not rows:
        return
    series = {f"{direction}: {point.what} lost (%)": [(float(r.extra["x"]), r.median) for r in rows]}  # type: ignore[arg-type]
    resent = [r for r in rows if "retransmissions" in r.measured]  # none without a capture: not drawn as 0
    if point.proto == "tcp" and resent:  # TCP loses nothing: what it resent is its loss
        series[f"{direction}: segments resent per 100 writes"] = [
            (float(r.extra["x"]), 100.0 * r.measured["retransmissions"] / (point.packets * len(r.values)))  # type: ignore[arg-type]
            for r in resent
        ]
    title = f"count/{direction}: loss against IP datagram size ({point.packets} {point.what} per size)"
    attach_chart(f"count {direction}: loss against IP size", sweep_chart, title, "IP datagram size (bytes)", series,
                 ylabel="per 100 sent", efficiency_panel=False)  # fmt: skip
    table = [f"{r.extra['x']!s:>6s} B {r.measured['lost']:8.0f} lost of {r.measured['sent']:.0f} ({r.median:.4f} %)"
             + (f", {r.measured['retransmissions']:.0f} segments resent" if "retransmissions" in r.measured else "")
             for r in rows]  # fmt: skip
    attach_text(f"count {direction}: loss against IP size", "\n".join(table))


def measure_counts(hil: HilContext, point: CountPoint, key: str) -> CaseRecord:
    """The point's datagrams sent `repeat` times, counted, recorded before any check."""
    pace = pace_pps(hil.link_mbit, point.ip_size)
    rate = round(pace * point.payload * 8 / 1e6, 3)  # iperf's -b paces the payload: this rate is `pace` datagrams/s
    expected_s = point.packets / pace
    spec = TrafficSpec("udp", point.direction, expected_s, length=point.payload, rate_mbps=rate,  # type: ignore[arg-type]
                       amount=str(point.packets * point.payload))  # fmt: skip
    # both ends know each other's link address before the first datagram (a neighbour still to be
    # resolved queues only a few datagrams: a start-up effect, not the path's loss)
    answers_ping(hil.pc_side.netns_prefix, hil.far_end.ip)
    start = time.time()
    runs: list[TrafficResult] = []
    window = hil.wire.window() if hil.wire is not None else None
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
    rec.extra.update(x=point.ip_size, packets=point.packets, payload=point.payload, pace_pps=pace,
                     sent_per_run=sent, lost_per_run=lost, offered_mbps=rate,
                     sender_mbps=[round(r.sender_mbps, 3) for r in runs])  # fmt: skip
    rec.traffic_s = round(sum(r.duration_s or expected_s for r in runs), 3)
    if window is not None:
        seen = window.close()
        wire = capture_agreement(seen, hil, point, spec.port, sum(sent), sum(lost))
        rec.extra["capture_count"] = wire
        for key in ("duplicates", "reordered"):
            if isinstance(value := wire.get(key), int):
                rec.measured[key] = float(value)
        add_wire(hil, rec, seen, spec, sum(lost), None)
    hil.recorder.record(rec, start, time.time())
    attach_text("counts", "\n".join(f"run {i}: {s} numbered, {s - n} received, {n} lost"
                                    for i, (s, n) in enumerate(zip(sent, lost, strict=True), 1)))  # fmt: skip
    return rec


def measure_tcp_counts(hil: HilContext, point: CountPoint, key: str) -> CaseRecord:
    """The point's writes sent `repeat` times over one TCP connection each, paced like the
    datagrams (the payload's rate at pace_pps); the receiver's bytes say how many writes
    arrived, the PC's capture how many segments carried them and how many were resent. iperf 2's
    server counts up to 4 bytes fewer than a stream without a client header carries (seen with the
    firmware's client; the capture has them all): a receiver short by less than half a write has
    them all, the shortfall recorded."""
    pace = pace_pps(hil.link_mbit, point.ip_size)
    rate = round(pace * point.payload * 8 / 1e6, 3)
    expected_s = point.packets / pace
    total = point.packets * point.payload
    spec = TrafficSpec("tcp", point.direction, expected_s, length=point.payload, rate_mbps=rate,  # type: ignore[arg-type]
                       amount=str(total))  # fmt: skip
    start = time.time()
    runs: list[TrafficResult] = []
    window = hil.wire.window() if hil.wire is not None else None
    for i in range(1, hil.repeat + 1):
        r = run_traffic(spec, hil.pc_side, hil.far_end, COUNTING_GENERATOR)
        for name, text in r.raw.items():
            attach_text(f"run {i}: {name}", text)
        runs.append(r)
    got = [r.bytes or 0 for r in runs]
    received = [min(point.packets, round(b / point.payload)) for b in got]
    lost = [point.packets - n for n in received]
    loss = [100.0 * n / point.packets for n in lost]
    rec = make_record("count", key, hil.dut.config.name, summarize(loss), None, unit="% lost")
    rec.loss_pct = max(rec.values)
    rec.measured.update(sent=float(point.packets), received=float(min(received)), lost=float(max(lost)))
    rec.extra.update(x=point.ip_size, packets=point.packets, payload=point.payload, pace_pps=pace,
                     sent_per_run=[point.packets] * len(runs), lost_per_run=lost, offered_mbps=rate,
                     bytes_per_run=got, receiver_short_bytes=[total - b for b in got],
                     sender_mbps=[round(r.sender_mbps, 3) for r in runs])  # fmt: skip
    rec.traffic_s = round(sum(r.duration_s or expected_s for r in runs), 3)
    if window is not None:
        seen = window.close()
        wire = tcp_capture_agreement(seen, hil, point, total * len(runs))
        rec.extra["capture_count"] = wire
        if isinstance(resent := wire.get("retransmissions"), int):
            rec.measured["retransmissions"] = float(resent)
        add_wire(hil, rec, seen, spec, 0, None)
    hil.recorder.record(rec, start, time.time())
    attach_text("counts", "\n".join(f"run {i}: {b} bytes received of {total} = {n} writes of {point.payload} B"
                                    for i, (b, n) in enumerate(zip(got, received, strict=True), 1)))  # fmt: skip
    return rec


def tcp_capture_agreement(seen: WireSeen, hil: HilContext, point: CountPoint, sent: int) -> dict[str, object]:
    """The data direction's payload on the PC's wire, each byte once (what was resent counted
    once), against the bytes the writes hold: equal when the sender sent exactly the count."""
    summary, why_not = whole_pc_capture(seen)
    if summary is None:
        return {"agrees": None, "why": why_not}
    pc, far = hil.pc_side.ip, hil.far_end.ip
    way = summary.direction(pc, far) if point.direction == "dut_rx" else summary.direction(far, pc)
    why = (f"{way.tcp_new_bytes} payload bytes on the PC's wire (each once), {sent} in the writes; they went "
           f"out in {way.tcp_payload_segments} segments ({way.retransmissions} resent, "
           f"largest {way.largest_tcp_payload} B)")  # fmt: skip
    return {"agrees": way.tcp_new_bytes == sent, "on_wire": way.tcp_new_bytes, "expected": sent,
            "segments": way.tcp_payload_segments, "retransmissions": way.retransmissions, "why": why}  # fmt: skip
