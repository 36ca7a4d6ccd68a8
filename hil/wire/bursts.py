"""The stress profiles' bursts as the wire saw them: per stream, the gap between the packets
inside each burst (median, p99) and the spacing of the bursts, against the profile's, from the
capture's timestamps (not the sender's clock); a burst whose packets came closer together than
half the profile's gap went out compressed."""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass

from hil.tools.ping import percentile
from hil.wire.pcap_summary import UdpFlow, gaps_us

COMPRESSED_BELOW = 0.5  # a burst whose median in-burst gap is below this share of the profile's


@dataclass(frozen=True)
class BurstTiming:
    stream: int
    bursts: int  # bursts seen (at least one packet captured)
    packets: int
    gap_median_us: float | None  # inside bursts
    gap_p99_us: float | None
    spacing_median_ms: float | None  # first packet of a burst to the next burst's
    profile_gap_us: int
    profile_period_ms: int
    compressed: tuple[int, ...]  # burst numbers

    def as_fields(self) -> dict[str, object]:
        return {
            "bursts": self.bursts, "packets": self.packets, "gap_median_us": _r(self.gap_median_us),
            "gap_p99_us": _r(self.gap_p99_us), "spacing_median_ms": _r(self.spacing_median_ms),
            "profile_gap_us": self.profile_gap_us, "profile_period_ms": self.profile_period_ms,
            "compressed_bursts": len(self.compressed), "compressed_first": list(self.compressed[:20]),
        }  # fmt: skip

    def line(self, direction: str) -> str:
        def num(v: float | None, fmt: str) -> str:
            return format(v, fmt) if v is not None else "-"

        return (
            f"{self.stream:6d} {direction:>8s} {self.bursts:6d} {num(self.gap_median_us, '9.1f')} "
            f"{num(self.gap_p99_us, '9.1f')} {self.profile_gap_us:8d} {num(self.spacing_median_ms, '9.2f')} "
            f"{self.profile_period_ms:8d} {len(self.compressed):10d}"
        )


HEADER = (
    f"{'stream':>6s} {'dir':>8s} {'bursts':>6s} {'gap med':>9s} {'gap p99':>9s} {'profile':>8s} "
    f"{'spacing':>9s} {'profile':>8s} {'compressed':>10s}\n"
    f"{'':6s} {'':8s} {'':6s} {'us':>9s} {'us':>9s} {'gap us':>8s} {'ms':>9s} {'ms':>8s} {'bursts':>10s}"
)


def _r(v: float | None) -> float | None:
    return round(v, 3) if v is not None else None


def burst_timing(flow: UdpFlow, stream: int, gap_us: int, period_ms: int) -> BurstTiming:
    """One stream's bursts from its captured packets (the stream format's burst numbers)."""
    by_burst: dict[int, list[float]] = {}
    for t, b in zip(flow.times, flow.bursts, strict=False):
        if b >= 0:
            by_burst.setdefault(b, []).append(t)
    gaps: list[float] = []
    compressed = []
    starts = []
    for b in sorted(by_burst):
        times = sorted(by_burst[b])
        starts.append(times[0])
        inside = gaps_us(times)
        gaps += inside
        if inside and statistics.median(inside) < COMPRESSED_BELOW * gap_us:
            compressed.append(b)
    spacing = [(y - x) * 1e3 for x, y in itertools.pairwise(starts)]
    return BurstTiming(
        stream, len(by_burst), sum(len(v) for v in by_burst.values()),
        statistics.median(gaps) if gaps else None, percentile(gaps, 99) if gaps else None,
        statistics.median(spacing) if spacing else None, gap_us, period_ms, tuple(compressed),
    )  # fmt: skip
