"""Watches a TCP measurement for RFC 6349's figures (hil.scenarios.rfc6349): before it, the idle
path's round trips (the baseline: PC -> far end, BASELINE_PINGS pings 2 ms apart) and the
senders' own TCP counters; during each run, a ping every 50 ms beside the transfer (its round
trips are the RTT during the transfer); after it, each direction's figures from the counters'
change (a host sender: its namespace's RetransSegs; the DUT: its console's counters), the
capture upstream of any loss as the cross-check, and the bottleneck's ideal TCP goodput.

The probe measures the same path idle and loaded, so Buffer Delay % compares like with like; the
TCP sender's own smoothed RTT (iperf 3's, where a host sends) is kept beside it. A figure whose
input the bench cannot give (a far end that answers no ping, a console without counters) is
missing from the record, which says why."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from hil.errors import BenchError
from hil.scenarios.rfc6349 import (
    PathBaseline,
    SenderCount,
    TcpFigures,
    baseline_from,
    capture_efficiency_pct,
    tcp_figures,
)
from hil.tools.ping import BackgroundPing, PingStats, ping_argv, run_ping
from hil.traffic.endpoints import tcp_segment_counters
from hil.traffic.roles import TrafficResult

if TYPE_CHECKING:
    from hil.session import HilContext
    from hil.wire.watch import WireSeen

BASELINE_PINGS = 10
BASELINE_INTERVAL_S = 0.002  # 10 pings in 20 ms: the minimum is the idle path's, without 90 ms of waiting
DEFAULT_SEGMENT = 1460  # the payload of a full segment on a 1500-byte MTU without TCP options
DIRECTIONS = ("dut_tx", "dut_rx")
# DUT to DUT (a partner on the DUT's link): the PC is on neither end of the flow
PAIR_NO_PROBE = ("DUT to DUT: the PC is on neither end of the flow, and its pings to the DUT do not cross "
                 "the path between the two DUTs (their queues)")  # fmt: skip


def bottleneck(hil: HilContext) -> tuple[float, str]:
    """The path's bottleneck: the bench link's line rate (RFC 6349 3.2.2's bottleneck bandwidth,
    known by construction: the virtual bench's tbf, a real bench's link as its file declares it)."""
    return hil.link_mbit, "the bench link's line rate"


def idle_baseline(hil: HilContext) -> tuple[PathBaseline | None, str, str]:
    """The idle path's baseline (None when no ping came back), why not, and the ping's output."""
    argv = ping_argv(hil.pc_side.netns_prefix, hil.far_end.ip, count=BASELINE_PINGS, interval_s=BASELINE_INTERVAL_S)
    try:
        stats, raw = run_ping(argv, timeout_s=BASELINE_PINGS * BASELINE_INTERVAL_S + 10)
    except BenchError as exc:
        return None, str(exc), ""
    rate, source = bottleneck(hil)
    found = baseline_from(stats, rate, source)
    return found, "" if found else f"{hil.far_end.name} answered none of {stats.sent} pings on the idle path", raw


class TcpWatch:
    """One TCP point's watch: `start()` before its runs, `during(expected_s)` around each run,
    `figures(...)` per direction after."""

    def __init__(self, hil: HilContext, senders: Sequence[str]) -> None:
        self.hil = hil
        self.senders = tuple(senders)  # the directions whose senders are counted (dut_rx: the PC sends)
        self.baseline: PathBaseline | None = None
        self.why: dict[str, str] = {}
        self.loaded: list[PingStats] = []
        self.texts: dict[str, str] = {}
        self._before: dict[str, dict[str, int] | None] = {}

    def _host_counters(self, direction: str) -> dict[str, int] | None:
        if direction == "dut_rx":
            return tcp_segment_counters(self.hil.pc_side.netns_prefix)
        return self.hil.far_end.tcp_counters()

    @property
    def pair(self) -> bool:
        """DUT to DUT: the flow's near end is the DUT's partner, not the PC."""
        return self.hil.pc_side.near is not None

    def start(self) -> None:
        if self.pair:
            self.why["baseline"] = self.why["loaded"] = PAIR_NO_PROBE
            self._before = {d: self._host_counters(d) for d in self.senders if d != "dut_rx"}
            return
        self.baseline, why, raw = idle_baseline(self.hil)
        if why:
            self.why["baseline"] = why
        self.texts["idle path ping (RFC 6349 baseline RTT)"] = raw or why
        self._before = {d: self._host_counters(d) for d in self.senders}

    @contextmanager
    def during(self, expected_s: float) -> Iterator[None]:
        if self.pair:
            yield
            return
        probe = BackgroundPing(self.hil.pc_side.netns_prefix, self.hil.far_end.ip, expected_s)
        with probe:
            yield
        try:
            self.loaded.append(probe.stats())
        except BenchError as exc:
            self.why["loaded"] = f"the probe printed no summary ({exc})"
        self.texts[f"RTT probe during run {len(self.texts)}"] = probe.text

    def loaded_stats(self) -> PingStats | None:
        """Every probe's round trips during the runs together."""
        if not self.loaded:
            return None
        rtts = tuple(r for s in self.loaded for r in s.rtts_ms)
        return PingStats(sum(s.sent for s in self.loaded), sum(s.received for s in self.loaded), rtts)

    def sender_count(self, direction: str, runs: Sequence[TrafficResult], segment: int,
                     dut_metrics: dict[str, float]) -> tuple[SenderCount | None, str]:  # fmt: skip
        """The direction's sender's count of what it sent and sent again: a host's namespace
        counters (segments sent = bytes delivered / segment + those sent again), the DUT's own
        console counters (dut_tcp_segs_sent counts every data segment it put on its link)."""
        if direction == "dut_rx" and self.pair:
            near = self.hil.pc_side.near
            return None, (f"the sender is DUT {near.name if near else 'beside it'}: its own counters are attached "
                          "(its stats before and after), not counted here")  # fmt: skip
        host = direction == "dut_rx" or self.hil.in_path
        if host:
            before, after = self._before.get(direction), self._host_counters(direction)
            who = "the PC" if direction == "dut_rx" else f"the {self.hil.far_end.name}"
            if before is None or after is None:
                return None, f"{who}'s TCP counters (/proc/net/snmp) could not be read"
            again = float(after["RetransSegs"] - before["RetransSegs"])
            delivered = sum(delivered_bytes(r) for r in runs)
            sent = delivered / segment + again
            return SenderCount(sent, again, f"{who}'s TCP counters (RetransSegs; bytes delivered / {segment} B)"), ""
        segs, again = dut_metrics.get("dut_tcp_segs_sent"), dut_metrics.get("dut_tcp_retrans")
        if segs is None or again is None:
            return None, "the DUT's console reports no count of the TCP segments it sent and sent again"
        return SenderCount(segs, again, "the DUT's own counters (tcp_tx_segs, tcp_retrans)"), ""

    def figures(
        self, direction: str, measured_mbps: float, ideal_mbps: float, runs: Sequence[TrafficResult], segment: int,
        dut_metrics: dict[str, float], seen: WireSeen | None,
    ) -> TcpFigures:  # fmt: skip
        sender, why = self.sender_count(direction, runs, segment, dut_metrics)
        capture = capture_efficiency(self.hil, direction, seen)
        why_not = {**self.why, **({"sender": why} if why else {})}
        out = tcp_figures(measured_mbps, ideal_mbps, self.baseline, self.loaded_stats(), sender, capture, why_not)
        tcp_rtt = [r.details["mean_rtt_ms"] for r in runs if "mean_rtt_ms" in r.details]
        if tcp_rtt:
            out.fields["sender_mean_srtt_ms"] = round(sum(tcp_rtt) / len(tcp_rtt), 4)
        return out


def delivered_bytes(run: TrafficResult) -> float:
    """The bytes a run delivered: the receiver's count, or its goodput over the run's time."""
    if run.bytes:
        return float(run.bytes)
    return run.receiver_mbps * 1e6 / 8 * (run.duration_s or run.spec.duration_s)


def capture_efficiency(hil: HilContext, direction: str, seen: WireSeen | None) -> float | None:
    """TCP Efficiency from the capture on the sender's side of the DUT (the PC's when the PC sends,
    the peer's for an in-path DUT's uplink), upstream of any loss on the path: None without one, or
    when the capture did not hold every packet."""
    if seen is None or not seen.complete:
        return None
    near, far = hil.pc_side.ip, hil.far_end.ip
    side, src, dst = ("pc", near, far) if direction == "dut_rx" else ("peer", far, near)
    summary = seen.summaries.get(side)
    if summary is None or (direction == "dut_tx" and not hil.in_path):
        return None
    d = summary.direction(src, dst)
    return capture_efficiency_pct(d.tcp_payload_bytes, d.tcp_new_bytes)


def segment_of(runs: Sequence[TrafficResult], seen: WireSeen | None, hil: HilContext, direction: str) -> int:
    """The transfer's segment payload: the largest the capture saw that way, else the MSS the PC
    observed, else a full segment's."""
    if seen is not None:
        near, far = hil.pc_side.ip, hil.far_end.ip
        src, dst = (near, far) if direction == "dut_rx" else (far, near)
        for summary in seen.summaries.values():
            largest = summary.direction(src, dst).largest_tcp_payload
            if largest:
                return largest
    observed = [r.observed_mss for r in runs if r.observed_mss]
    return max(observed) if observed else DEFAULT_SEGMENT
