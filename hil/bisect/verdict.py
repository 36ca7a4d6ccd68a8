"""Is a commit like the good end or like the bad end? By its repetitions against both ends':
Welch's t of the commit's mean against each end's, each spread floored at RESOLUTION of its mean
(a window-limited rate repeats to the last digit, and a zero spread would make any difference
infinitely significant). The ends must first be told apart by END_T; a commit is classified as
the nearer end when it is at least FAR_T away from the other, else it is unclear (measure more)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

RESOLUTION = 0.005  # the least spread a mean is credited with, as a share of it
END_T = 6.0  # the good and bad ends differ by at least this many standard errors
FAR_T = 4.0  # a commit is the nearer end's when this many standard errors from the other


@dataclass(frozen=True)
class Sample:
    values: tuple[float, ...]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def sd(self) -> float:
        return statistics.stdev(self.values) if len(self.values) > 1 else 0.0

    def text(self, unit: str) -> str:
        return f"{self.median:.4g} {unit} (mean {self.mean:.4g} ± {self.sd:.2g}, n={len(self.values)})"


def welch_t(a: Sample, b: Sample) -> float:
    """|mean a - mean b| over the standard error of the difference (spreads floored)."""
    va = max(a.sd, RESOLUTION * abs(a.mean)) ** 2 / len(a.values)
    vb = max(b.sd, RESOLUTION * abs(b.mean)) ** 2 / len(b.values)
    se = math.sqrt(va + vb)
    if a.mean == b.mean:  # (all-zero samples too: no spread, no difference)
        return 0.0
    return abs(a.mean - b.mean) / se if se > 0 else math.inf


@dataclass(frozen=True)
class Verdict:
    kind: str  # "good" | "bad" | "unclear"
    t_good: float
    t_bad: float

    def text(self) -> str:
        return f"{self.kind} (t {self.t_good:.1f} from the good end, {self.t_bad:.1f} from the bad)"


def classify(s: Sample, good: Sample, bad: Sample) -> Verdict:
    t_good, t_bad = welch_t(s, good), welch_t(s, bad)
    nearer = "good" if abs(s.mean - good.mean) <= abs(s.mean - bad.mean) else "bad"
    far = t_bad if nearer == "good" else t_good
    return Verdict(nearer if far >= FAR_T else "unclear", t_good, t_bad)


def ends_apart(good: Sample, bad: Sample) -> bool:
    return welch_t(good, bad) >= END_T
