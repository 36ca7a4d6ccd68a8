"""RFC 6349's figures of a TCP throughput test, from what a measurement saw: the path's baseline
(the minimum RTT sampled on the idle path, the bottleneck bandwidth, their bandwidth-delay product
and the receive window it needs), and for the transfer the Transfer Time Ratio (actual / ideal
transfer time: the ideal TCP goodput of the bottleneck over the measured one), TCP Efficiency
((bytes sent - bytes sent again) / bytes sent, from the sender's own count of the segments it sent
again) and Buffer Delay Percentage ((mean RTT during the transfer - baseline RTT) / baseline RTT).
Pure arithmetic: hil.scenarios.tcp_watch measures the inputs. A figure whose input is missing is
left out and `missing` says why."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hil.tools.ping import PingStats, percentile

if TYPE_CHECKING:
    from hil.results.recorder import CaseRecord

METRICS = ("ttr", "tcp_efficiency_pct", "buffer_delay_pct")


@dataclass(frozen=True)
class PathBaseline:
    """The idle path's round trip (RFC 6349 3.2.1: its minimum) and bottleneck (3.2.2)."""

    rtt_ms: float  # the minimum of the samples
    median_ms: float
    samples: int
    bottleneck_mbps: float  # the line rate of the path's slowest link
    bottleneck_source: str

    @property
    def bdp_bytes(self) -> int:
        """The bandwidth-delay product in bytes: the receive window a sender needs to fill the path
        (RFC 6349 3.3.1: RWND >= BDP / 8)."""
        return math.ceil(self.bottleneck_mbps * 1e6 * self.rtt_ms / 1000.0 / 8.0)

    def as_fields(self) -> dict[str, object]:
        return {"rtt_ms": round(self.rtt_ms, 4), "median_ms": round(self.median_ms, 4), "samples": self.samples,
                "bottleneck_mbps": self.bottleneck_mbps, "bottleneck": self.bottleneck_source,
                "bdp_bytes": self.bdp_bytes}  # fmt: skip

    def text(self) -> str:
        return (
            f"baseline RTT {self.rtt_ms:.3f} ms (minimum of {self.samples} idle round trips, median "
            f"{self.median_ms:.3f} ms); bottleneck {self.bottleneck_mbps:g} Mbit/s ({self.bottleneck_source}); "
            f"BDP {self.bdp_bytes} B: the window that fills the path"
        )


def baseline_from(stats: PingStats, bottleneck_mbps: float, source: str) -> PathBaseline | None:
    """The baseline from an idle probe's round trips (None when none came back)."""
    if not stats.rtts_ms:
        return None
    rtts = list(stats.rtts_ms)
    return PathBaseline(min(rtts), statistics.median(rtts), len(rtts), bottleneck_mbps, source)


@dataclass(frozen=True)
class SenderCount:
    """The sender's own count of the segments it sent and sent again during the transfer."""

    sent: float  # data segments sent, each retransmission included
    retransmitted: float
    source: str  # whose count: "the PC's TCP counters", "the DUT's own counters", ...

    @property
    def efficiency_pct(self) -> float:
        return 100.0 * (self.sent - self.retransmitted) / self.sent if self.sent > 0 else 100.0


def transfer_time_ratio(ideal_mbps: float, measured_mbps: float) -> float:
    """Actual over ideal transfer time of the same bytes: the ideal goodput over the measured one."""
    return ideal_mbps / measured_mbps if measured_mbps > 0 else math.inf


def buffer_delay_pct(loaded_mean_ms: float, baseline_ms: float) -> float:
    return 100.0 * (loaded_mean_ms - baseline_ms) / baseline_ms


@dataclass
class TcpFigures:
    """A TCP record's RFC 6349 figures: `metrics` (thresholds may name them: ttr, tcp_efficiency_pct,
    buffer_delay_pct; and baseline_rtt_ms, loaded_rtt_ms, bdp_bytes), `fields` (the record's
    extra.rfc6349: sources, probe counts, the capture's view), `missing` (figure -> why not)."""

    metrics: dict[str, float] = field(default_factory=dict)
    fields: dict[str, object] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    # of the missing, those the path itself withheld (no probe answered under load): a limit on
    # them still fails, unlike a figure the bench cannot give (no counters, no capture)
    unanswered: dict[str, str] = field(default_factory=dict)

    def as_fields(self) -> dict[str, object]:
        out = {**self.fields, **({"missing": self.missing} if self.missing else {})}
        return out | ({"unanswered": self.unanswered} if self.unanswered else {})

    def headline(self) -> str:
        m = self.metrics
        parts = []
        if "ttr" in m:
            parts.append(f"TTR {m['ttr']:.3f}")
        if "tcp_efficiency_pct" in m:
            parts.append(f"TCP efficiency {m['tcp_efficiency_pct']:.2f} %")
        if "buffer_delay_pct" in m:
            parts.append(f"buffer delay {m['buffer_delay_pct']:.0f} % ({m['loaded_rtt_ms']:.2f} ms loaded "
                         f"vs {m['baseline_rtt_ms']:.3f} ms idle)")  # fmt: skip
        parts += [f"no {k}: {why}" for k, why in self.missing.items()]
        return "; ".join(parts)

    def text(self) -> str:
        """The figures and where each input came from, for the case's page."""
        f, lines = self.fields, [self.headline(), ""]
        lines.append(f"TTR: ideal {f['ideal_mbps']} Mbit/s (the bottleneck's TCP goodput) over the measured goodput")
        if isinstance(base := f.get("baseline"), dict):
            lines.append(f"baseline: RTT {base['rtt_ms']} ms (minimum of {base['samples']} idle pings, median "
                         f"{base['median_ms']} ms), bottleneck {base['bottleneck_mbps']} Mbit/s "
                         f"({base['bottleneck']}), BDP {base['bdp_bytes']} B")  # fmt: skip
        if isinstance(load := f.get("loaded"), dict):
            lines.append(f"during the transfer: {load['answered']} of {load['probes']} pings answered, mean "
                         f"{load['mean_ms']} ms, median {load['median_ms']} ms, p99 {load['p99_ms']} ms, max "
                         f"{load['max_ms']} ms")  # fmt: skip
        if "sender_mean_srtt_ms" in f:
            lines.append(f"the TCP sender's own smoothed RTT (iperf 3): mean {f['sender_mean_srtt_ms']} ms")
        if isinstance(sender := f.get("sender"), dict):
            counted = (f"{sender['retransmitted']} of {sender['segments_sent']} segments sent again, "
                       if "segments_sent" in sender else "")  # fmt: skip
            lines.append(f"TCP efficiency: {counted}by {sender['source']}")
        if "capture_efficiency_pct" in f:
            lines.append(f"the capture upstream of any loss: {f['capture_efficiency_pct']} % of the payload new")
        return "\n".join(lines)


def tcp_figures(
    measured_mbps: float,
    ideal_mbps: float,
    baseline: PathBaseline | None,
    loaded: PingStats | None,
    sender: SenderCount | None,
    capture_efficiency_pct: float | None,
    why_not: dict[str, str],
) -> TcpFigures:
    """The figures of one TCP record: `ideal_mbps` the bottleneck's TCP goodput at the transfer's
    segment size, `loaded` the probe's round trips during the transfer, `sender` the sender's own
    count, `capture_efficiency_pct` the same figure from a capture upstream of any loss (the
    cross-check); `why_not` says why an input is None (keys: baseline, loaded, sender)."""
    out = TcpFigures()
    out.metrics["ttr"] = round(transfer_time_ratio(ideal_mbps, measured_mbps), 4)
    out.fields["ideal_mbps"] = round(ideal_mbps, 3)
    if baseline is not None:
        out.metrics["baseline_rtt_ms"] = round(baseline.rtt_ms, 4)
        out.metrics["bdp_bytes"] = float(baseline.bdp_bytes)
        out.fields["baseline"] = baseline.as_fields()
    if loaded is not None and loaded.rtts_ms:
        rtts = list(loaded.rtts_ms)
        mean = statistics.fmean(rtts)
        out.metrics["loaded_rtt_ms"] = round(mean, 4)
        out.fields["loaded"] = {"mean_ms": round(mean, 4), "median_ms": round(statistics.median(rtts), 4),
                                "p99_ms": round(percentile(rtts, 99), 4), "max_ms": round(max(rtts), 4),
                                "probes": loaded.sent, "answered": loaded.received}  # fmt: skip
        if baseline is not None:
            out.metrics["buffer_delay_pct"] = round(buffer_delay_pct(mean, baseline.rtt_ms), 2)
        else:
            out.missing["buffer_delay_pct"] = f"no baseline RTT: {why_not.get('baseline', 'not measured')}"
    else:
        why = why_not.get("loaded") or "no probe came back during the transfer"
        out.missing["buffer_delay_pct"] = f"no RTT during the transfer: {why}"
        if loaded is not None and loaded.sent > 0:  # the probe ran and the path answered none of it
            out.unanswered["buffer_delay_pct"] = f"none of {loaded.sent} pings answered during the transfer"
    if sender is not None:
        out.metrics["tcp_efficiency_pct"] = round(sender.efficiency_pct, 3)
        out.fields["sender"] = {"segments_sent": round(sender.sent), "retransmitted": round(sender.retransmitted),
                                "source": sender.source}  # fmt: skip
    elif capture_efficiency_pct is not None:
        out.metrics["tcp_efficiency_pct"] = round(capture_efficiency_pct, 3)
        out.fields["sender"] = {"source": "the capture at the sender's side (each payload byte seen again)"}
    else:
        out.missing["tcp_efficiency_pct"] = why_not.get("sender", "the sender's retransmissions are not known")
    if capture_efficiency_pct is not None:
        out.fields["capture_efficiency_pct"] = round(capture_efficiency_pct, 3)
    return out


def capture_efficiency_pct(payload_bytes: int, new_bytes: int) -> float | None:
    """TCP Efficiency from a capture upstream of any loss: every payload byte it saw against those
    it saw for the first time (None without payload)."""
    return 100.0 * new_bytes / payload_bytes if payload_bytes > 0 else None


def expected_window_figures(
    window_bytes: int, rtt_ms: float, ideal_mbps: float, expected_mbps: float
) -> dict[str, float]:
    """What a transfer limited by its receive window on a path of known round trip must show
    (the DUT window ladder): TTR = the ideal goodput over the window's (window per round trip),
    and at most the whole window queued ahead of a probe, window x 8 / rate, as Buffer Delay %
    (below the path's BDP nothing stays queued between bursts; above it the excess does)."""
    queue_ms = window_bytes * 8 / (ideal_mbps * 1e6) * 1000.0
    return {"ttr": round(ideal_mbps / expected_mbps, 4), "max_buffer_delay_pct": round(100.0 * queue_ms / rtt_ms, 2)}


def rfc6349_table(records: Sequence[CaseRecord], xname: str) -> str:
    """A TCP group's RFC 6349 figures beside its goodput, one line a point, with each point's
    baseline RTT and BDP."""
    lines = [f"{xname:>12s} {'Mbit/s':>8s} {'ideal':>7s} {'TTR':>7s} {'TCP eff%':>9s} {'base RTT':>9s} "
             f"{'loaded':>8s} {'BD%':>8s} {'BDP (B)':>8s}  case"]  # fmt: skip
    for r in records:
        m, f = r.measured, r.extra.get("rfc6349", {})
        ideal = f.get("ideal_mbps") if isinstance(f, dict) else None

        def num(key: str, width: int, fmt: str, m: dict[str, float] = m) -> str:
            return f"{m[key]:{width}{fmt}}" if key in m else f"{'-':>{width}s}"

        lines.append(
            f"{r.extra.get('x', '')!s:>12s} {r.median:8.2f} {(f'{ideal:7.2f}' if ideal else '      -')} "
            f"{num('ttr', 7, '.3f')} {num('tcp_efficiency_pct', 9, '.2f')} {num('baseline_rtt_ms', 7, '.3f')}ms "
            f"{num('loaded_rtt_ms', 6, '.2f')}ms {num('buffer_delay_pct', 8, '.0f')} {num('bdp_bytes', 8, '.0f')}  "
            f"{r.case}"
        )
    return "\n".join(lines)
