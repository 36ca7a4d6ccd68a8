"""Change points of one metric's series over runs: the runs split into consecutive groups of
steady values. The gate's detector is FD.io CSIT's jumpavg (PyPI `jumpavg`, pinned: the grouping
CSIT's trending uses, by minimum description length, each run weighed by its repetitions);
`benchmarks/detection_power.py` measured it against the textbook alternative kept here for
comparison (a Gaussian mean per group with a BIC penalty, exact dynamic programming) and chose it
(docs/history.md has the table).

Both take a series of runs, each a value or the list of its repetitions, and return the groups;
the verdict on the newest group is hil.report.trends'."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import jumpavg

Run = float | Sequence[float]  # a run's value, or its repetitions


@dataclass(frozen=True)
class Group:
    start: int  # index of its first run
    stop: int  # one past its last
    mean: float


def run_mean(run: Run) -> float:
    return float(run) if isinstance(run, int | float) else statistics.fmean(run)


def jumpavg_groups(series: Sequence[Run], resolution: float) -> list[Group]:
    """jumpavg's grouping. `resolution`: the smallest difference that matters in the metric's unit
    (jumpavg's `unit`: below it values are one; CSIT's trending uses half a percent of the
    throughput). A series of zeros (no loss ever) is one group."""
    runs = [float(r) if isinstance(r, int | float) else [float(v) for v in r] for r in series]
    if max((max(r) if isinstance(r, list) else r) for r in runs) <= 0.0:
        return [Group(0, len(runs), 0.0)]
    found = jumpavg.classify(runs, unit=resolution)
    out, start = [], 0
    for group in found:
        stop = start + len(group.run_list)
        out.append(Group(start, stop, statistics.fmean(run_mean(r) for r in runs[start:stop])))
        start = stop
    return out


# the textbook detector, for comparison in benchmarks/detection_power.py
BIC_BITS = 4.0  # per group: its mean and where it starts
NOISE_FLOOR = 0.002  # of the median: 0.2 %


def noise_sd(values: Sequence[float]) -> float:
    """The run-to-run standard deviation: 1.4826 x the median absolute consecutive difference / sqrt 2,
    at least NOISE_FLOOR of the median's magnitude (and never 0)."""
    diffs = [abs(b - a) for a, b in itertools.pairwise(values)]
    sd = 1.4826 * statistics.median(diffs) / math.sqrt(2) if diffs else 0.0
    return max(sd, NOISE_FLOOR * abs(statistics.median(values)), 1e-12)


def bic_groups(series: Sequence[Run], resolution: float) -> list[Group]:
    """The partition minimizing the squared deviations from each group's mean in units of the
    run-to-run noise (at least `resolution`) plus BIC_BITS x ln(n) per group, exactly (O(n^2))."""
    values = [run_mean(r) for r in series]
    noise = max(noise_sd(values), resolution)
    n = len(values)
    prefix, squares = [0.0], [0.0]
    for v in values:
        prefix.append(prefix[-1] + v)
        squares.append(squares[-1] + v * v)

    def cost(i: int, j: int) -> float:
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


Detector = Callable[[Sequence[Run], float], list[Group]]
DETECTORS: dict[str, Detector] = {"jumpavg": jumpavg_groups, "bic": bic_groups}
GATE_DETECTOR = "jumpavg"
