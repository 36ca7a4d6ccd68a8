"""Trends over a DUT's run history (``<results>/history/metrics.jsonl``): per case and headline
metric, the last runs of the same DUT and profile split into groups of steady values by a
change-point analysis, and a verdict on the newest group: a regression or a progression with the
run where it began and its size against the spread, or steady. A step too small for any one run's
tolerance (the regression gate's, hil.results.baseline) shows as a group of its own once enough
runs sit on it; a slow drift as several groups, each worse than the best before it.

The method (CSIT's jumpavg groups runs by minimum description length; this is the same idea in
its textbook form): the partition of the series into consecutive groups minimizing the squared
deviations from each group's mean in units of the noise, plus BIC_BITS x ln(n) per group (the
Bayesian information criterion of a Gaussian mean per group), found exactly by dynamic
programming. The noise is the series' own run-to-run spread, estimated from the median absolute
difference of consecutive runs (a step moves one difference, not the median), with a floor of
NOISE_FLOOR of the median so that a series of identical numbers does not make a thousandth a
change."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from hil.report.history import RunNumbers
from hil.results.recorder import metric_better, metric_unit

TREND_METRICS = ("mbps", "kbps", "median_ms", "ndr_mbps", "tcp_efficiency_pct")  # each case's headline
DEFAULT_RUNS = 30  # the newest runs analysed
MIN_RUNS = 6  # fewer: no trend yet
BIC_BITS = 4.0  # per group: its mean and where it starts (3 let 0.5 % of steady series through)
NOISE_FLOOR = 0.002  # of the median: 0.2 %
MIN_Z = 7.0  # a change counts when the two groups' means differ by this many of their standard errors
HAMPEL_K, HAMPEL_HALF = 3.0, 2  # an odd run: this many spreads from the median of its 5-run neighbourhood
MIN_GROUP = 3  # runs in the newest group before it is a change (one odd run of a busy host is not)


@dataclass(frozen=True)
class Group:
    start: int  # index of its first run
    stop: int  # one past its last
    mean: float


@dataclass(frozen=True)
class Trend:
    key: str  # scenario/case/metric
    runs: tuple[str, ...]  # run ids, oldest first
    values: tuple[float, ...]
    groups: tuple[Group, ...]
    noise: float  # the run-to-run standard deviation
    verdict: str  # "regression", "progression", "steady"
    since: int | None = None  # index of the run the change began with
    before: float | None = None  # the mean it is compared with
    after: float | None = None

    @property
    def change_pct(self) -> float | None:
        if self.before is None or self.after is None or self.before == 0:
            return None
        return 100.0 * (self.after - self.before) / abs(self.before)

    @property
    def sigmas(self) -> float | None:
        """The change in units of the run-to-run spread."""
        if self.before is None or self.after is None:
            return None
        return abs(self.after - self.before) / self.noise

    def line(self) -> str:
        if self.verdict == "steady" or self.since is None:
            return f"steady {self.key}: {len(self.groups)} group(s) over {len(self.values)} runs"
        unit = metric_unit(self.key.rsplit("/", 1)[-1])
        ago = len(self.values) - self.since
        return (
            f"{self.verdict.upper()} {self.key}: {self.change_pct:+.2f} % ({self.before:.4g} -> {self.after:.4g} "
            f"{unit}, {self.sigmas:.1f} x the run-to-run spread {self.noise:.3g}) since run {self.runs[self.since]} "
            f"({ago} run{'s' if ago != 1 else ''} ago, {len(self.values)} analysed)"
        )


def noise_sd(values: Sequence[float]) -> float:
    """The run-to-run standard deviation: 1.4826 x the median absolute consecutive difference / sqrt 2,
    at least NOISE_FLOOR of the median's magnitude (and never 0)."""
    diffs = [abs(b - a) for a, b in itertools.pairwise(values)]
    sd = 1.4826 * statistics.median(diffs) / math.sqrt(2) if diffs else 0.0
    return max(sd, NOISE_FLOOR * abs(statistics.median(values)), 1e-12)


def hampel(values: Sequence[float], noise: float, half: int = HAMPEL_HALF) -> list[float]:
    """Each value more than HAMPEL_K x the noise from the median of its neighbourhood (`half` runs
    each side) replaced by that median: one odd run (a busy host's) is not a group of its own, a
    step that lasts follows its neighbours."""
    out = []
    for i, v in enumerate(values):
        local = statistics.median(values[max(0, i - half) : i + half + 1])
        out.append(local if abs(v - local) > HAMPEL_K * noise else v)
    return out


def segment(values: Sequence[float], noise: float) -> list[Group]:
    """The optimal partition into consecutive groups (exact dynamic programming, O(n^2))."""
    n = len(values)
    prefix, squares = [0.0], [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
        squares.append(squares[-1] + v * v)

    def cost(i: int, j: int) -> float:  # the group values[i:j]: its squared deviations in noise units
        s, k = prefix[j] - prefix[i], j - i
        return max(0.0, squares[j] - squares[i] - s * s / k) / (noise * noise)

    penalty = BIC_BITS * math.log(max(n, 2))
    best = [0.0] + [math.inf] * n
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            c = best[i] + cost(i, j) + penalty
            if c < best[j]:
                best[j], cut[j] = c, i
    bounds, j = [], n
    while j > 0:
        bounds.append((cut[j], j))
        j = cut[j]
    return [Group(i, j, (prefix[j] - prefix[i]) / (j - i)) for i, j in reversed(bounds)]


def analyse(key: str, runs: Sequence[str], values: Sequence[float]) -> Trend:
    """One series' groups and the verdict on its newest group: against the group before it (a step),
    else against the best group before it (a drift of several steps); either MIN_Z standard errors
    of the difference of their means or more."""
    noise = noise_sd(values)
    groups = segment(hampel(values, noise), noise)
    base = Trend(key, tuple(runs), tuple(values), tuple(groups), noise, "steady")
    if len(groups) < 2 or groups[-1].stop - groups[-1].start < MIN_GROUP:
        return base
    higher = metric_better(key.rsplit("/", 1)[-1]) == "higher"
    last, previous = groups[-1], groups[-2]

    def worse(a: Group, b: Group) -> bool:  # a worse than b
        return a.mean < b.mean if higher else a.mean > b.mean

    best = max(groups[:-1], key=lambda g: g.mean if higher else -g.mean)
    if worse(last, previous) and _z(last, previous, noise) >= MIN_Z:
        return Trend(**{**base.__dict__, "verdict": "regression", "since": last.start, "before": previous.mean,
                        "after": last.mean})  # fmt: skip
    if worse(last, best) and _z(last, best, noise) >= MIN_Z:  # a drift: several steps down from the best
        start = next(g.start for g in groups if g.start > best.start)  # the first step down from the best
        return Trend(**{**base.__dict__, "verdict": "regression", "since": start, "before": best.mean,
                        "after": last.mean})  # fmt: skip
    if not worse(last, previous) and _z(last, previous, noise) >= MIN_Z:
        return Trend(**{**base.__dict__, "verdict": "progression", "since": last.start, "before": previous.mean,
                        "after": last.mean})  # fmt: skip
    return base


def _z(a: Group, b: Group, noise: float) -> float:
    """How many standard errors of their difference apart two groups' means are."""
    return abs(a.mean - b.mean) / (noise * math.sqrt(1 / (a.stop - a.start) + 1 / (b.stop - b.start)))


def trends(history: Sequence[RunNumbers], dut: str, profile: str, last: int = DEFAULT_RUNS) -> list[Trend]:
    """Every headline metric's trend over the newest `last` runs of `dut` and `profile` (runs that
    lack a key are left out of its series); none under MIN_RUNS."""
    runs = [r for r in history if r.dut == dut and r.profile == profile][-last:]
    keys = sorted({k for r in runs for k in r.values if k.rsplit("/", 1)[-1] in TREND_METRICS})
    out = []
    for key in keys:
        series = [(r.run, r.values[key]) for r in runs if key in r.values and math.isfinite(r.values[key])]
        if len(series) >= MIN_RUNS:
            out.append(analyse(key, [s[0] for s in series], [s[1] for s in series]))
    return out


def trend_text(found: Sequence[Trend]) -> str:
    """The verdicts, changes first; the steady ones counted."""
    changed = [t for t in found if t.verdict != "steady"]
    lines = [t.line() for t in sorted(changed, key=lambda t: (t.verdict != "regression", t.key))]
    steady = len(found) - len(changed)
    lines.append(f"{steady} of {len(found)} case metrics steady" if found else "no trend: fewer than 6 runs on file")
    return "\n".join(lines)
