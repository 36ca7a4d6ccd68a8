"""How evenly an offered UDP stream reached the device: the gaps between its datagrams where it
enters the DUT, against the gap of an evenly spaced stream at the offered rate.

RFC 2544 offers frames evenly spaced at the offered rate; a generator's timer or a shaper
(tbf) can instead hand a device its datagrams in clumps, and a device with little buffering loses
in a clump what it would forward evenly spaced (issue 32 measured a black box's capacity 17 %
lower downlink than uplink for 64-500-byte datagrams, the difference being the PC's shaper).
The capture on the generator's side of the link (the PC's veth for traffic towards the DUT, the
peer's behind a DUT in the path) timestamps each datagram when it leaves the shaper, which on a
veth is when it reaches the device.

`clumped_pct`: the share of gaps shorter than half the even gap (datagrams arriving in a burst);
`cv`: the gaps' coefficient of variation (0 for a perfectly even stream)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise

CLUMP_SHARE = 0.5  # a gap shorter than half the even gap: the datagram came in a clump


@dataclass(frozen=True)
class Spacing:
    datagrams: int
    even_gap_us: float  # the gap of an evenly spaced stream at the offered rate
    median_gap_us: float
    p5_gap_us: float
    p95_gap_us: float
    cv: float
    clumped_pct: float

    def as_fields(self) -> dict[str, float | int]:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(self).items()}

    def text(self) -> str:
        return (
            f"gaps at the DUT's input: median {self.median_gap_us:.1f} us (even: {self.even_gap_us:.1f}), "
            f"p5-p95 {self.p5_gap_us:.1f}-{self.p95_gap_us:.1f} us, {self.clumped_pct:.1f} % clumped"
        )


def spacing_of(times: Sequence[float], offered_mbps: float, payload_bytes: int) -> Spacing | None:
    """The spacing of one stream's datagrams from their capture times (seconds, capture order),
    offered at `offered_mbps` of UDP goodput with `payload_bytes` per datagram; None for fewer than
    3 datagrams or no offered rate."""
    if len(times) < 3 or offered_mbps <= 0 or payload_bytes <= 0:
        return None
    gaps = sorted(1e6 * (b - a) for a, b in pairwise(times))
    even = payload_bytes * 8 / offered_mbps  # us between datagrams at the offered rate
    mean = statistics.fmean(gaps)

    def pct(p: float) -> float:
        return gaps[min(len(gaps) - 1, max(0, round(p / 100 * (len(gaps) - 1))))]

    clumped = sum(g < CLUMP_SHARE * even for g in gaps)
    return Spacing(
        datagrams=len(times),
        even_gap_us=even,
        median_gap_us=statistics.median(gaps),
        p5_gap_us=pct(5),
        p95_gap_us=pct(95),
        cv=statistics.pstdev(gaps) / mean if mean > 0 else 0.0,
        clumped_pct=100.0 * clumped / len(gaps),
    )
