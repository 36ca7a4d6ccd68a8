"""Summary statistics over repetitions: median (the asserted value) and spread."""

from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    values: tuple[float, ...]
    median: float
    minimum: float
    maximum: float
    stdev: float

    def format(self, unit: str = "") -> str:
        u = f" {unit}" if unit else ""
        return (
            f"median {self.median:.2f}{u} (min {self.minimum:.2f}, max {self.maximum:.2f}, "
            f"sd {self.stdev:.2f}, n={len(self.values)})"
        )


def summarize(values: list[float] | tuple[float, ...]) -> Summary:
    if not values:
        raise ValueError("no values to summarize")
    vals = tuple(float(v) for v in values)
    stdev = statistics.stdev(vals) if len(vals) > 1 else 0.0
    return Summary(vals, statistics.median(vals), min(vals), max(vals), stdev)
