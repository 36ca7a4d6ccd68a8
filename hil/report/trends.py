"""Trends over a DUT's run history (``<results>/history/metrics.jsonl``): per case and metric
with a direction (hil.results.recorder.TREND_METRICS: throughput, loss, jitter, latency median and
p99, TCP efficiency and retransmissions, the DUT's CPU per Mbit/s, free memory, RFC 2544 NDR/PDR,
RFC 6349 TTR), the last runs of the same DUT and profile split into groups of steady values by a
change-point detector (hil.report.changepoints: CSIT's jumpavg, each run weighed by its
repetitions), and a verdict on the newest group: a regression or a progression with the run (and
build) where it began, or steady. A step too small for any one run's floor shows as a group of its
own once MIN_GROUP runs sit on it, or at once when it is CLEAR_FACTOR times the relevant change;
a slow drift as several groups, each worse than the best before.

The noise is the series' own, from its history (jumpavg codes each group's spread), never one
run's: a defect that scatters the repetitions does not widen its own allowance. A change must also
be relevant: at least the metric's RELEVANT difference (a third of a percent of a rate on a link
whose run-to-run spread is a twentieth of that is real, and is not what a release is held for)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from hil.report.changepoints import DETECTORS, GATE_DETECTOR, Group, Run, noise_sd, run_mean
from hil.report.history import RunNumbers, run_value
from hil.results.recorder import TREND_METRICS, metric_better, metric_unit

DEFAULT_RUNS = 30  # the newest runs analysed
MIN_RUNS = 3  # fewer: no trend yet (the first run of a bench is its baseline: two runs and the newest)
# the metrics whose regression fails a run (--trend-gate on); the others (a ping's p99, jitter, the
# DUT's CPU per Mbit/s, RFC 6349's TTR and buffer delay, the loaded RTT) are charted and reported:
# on the recorded histories of the virtual bench they made 5-7 % of unchanged case-runs a false
# alarm, the gated ones 0-1.6 % on the virtual bench (benchmarks/detection_power.py, docs/history.md)
GATED_METRICS = frozenset({"mbps", "kbps", "median_ms", "loss_pct", "tcp_efficiency_pct", "dut_tcp_retrans",
                           "pool_free", "heap_free", "ndr_mbps", "pdr_mbps"})  # fmt: skip
RELEVANT_SPREADS = 4.0  # a change must also exceed this many run-to-run spreads of the history before it
MIN_GROUP = 2  # runs in the newest group before it is a change (one odd run of a busy host is not)
# ... unless that one run's change is this many times the relevant difference: a 3 % step of a
# rate or 0.3 points of loss fail the first run that shows them (the noise of one odd run stays
# under it: benchmarks/detection_power.py, docs/history.md)
CLEAR_FACTOR = 2.0
# per metric: (the detector's resolution, the smallest relevant change), each either relative
# ("pct": of the series' median) or absolute (in the metric's unit)
SCALE: dict[str, tuple[tuple[float, str], tuple[float, str]]] = {
    "mbps": ((0.1, "pct"), (1.0, "pct")), "kbps": ((0.1, "pct"), (1.0, "pct")),
    "ndr_mbps": ((0.1, "pct"), (1.0, "pct")), "pdr_mbps": ((0.1, "pct"), (1.0, "pct")),
    "tcp_efficiency_pct": ((0.05, "abs"), (0.2, "abs")), "ttr": ((0.005, "abs"), (0.02, "abs")),
    "loss_pct": ((0.01, "abs"), (0.05, "abs")), "jitter_ms": ((0.005, "abs"), (0.02, "abs")),
    "median_ms": ((0.01, "abs"), (0.05, "abs")), "latency_ms": ((0.01, "abs"), (0.05, "abs")),
    "loaded_rtt_ms": ((0.1, "abs"), (0.5, "abs")), "buffer_delay_pct": ((1.0, "abs"), (5.0, "abs")),
    "dut_tcp_retrans": ((1.0, "abs"), (3.0, "abs")), "dut_cpu_per_mbps": ((1.0, "pct"), (10.0, "pct")),
    "pool_free": ((1.0, "abs"), (1.0, "abs")), "heap_free": ((64.0, "abs"), (512.0, "abs")),
}  # fmt: skip


def _scaled(spec: tuple[float, str], level: float) -> float:
    value, kind = spec
    return value * abs(level) / 100.0 if kind == "pct" else value


@dataclass(frozen=True)
class Trend:
    key: str  # scenario/case/metric
    runs: tuple[str, ...]  # run ids, oldest first
    values: tuple[float, ...]  # each run's value (the mean of its repetitions where kept)
    groups: tuple[Group, ...]
    noise: float  # the run-to-run standard deviation (for the page: how big a change is)
    verdict: str  # "regression", "progression", "steady"
    since: int | None = None  # index of the run the change began with
    before: float | None = None  # the mean it is compared with
    after: float | None = None
    builds: tuple[str, ...] = ()  # each run's build (version, digest), "" where unknown

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

    @property
    def gated(self) -> bool:
        """Its regression fails the run (GATED_METRICS), else it is reported only."""
        return self.key.rsplit("/", 1)[-1] in GATED_METRICS

    @property
    def build(self) -> str | None:
        """The build the change began with, when the history knows it."""
        if self.since is None or self.since >= len(self.builds):
            return None
        return self.builds[self.since] or None

    def line(self) -> str:
        if self.verdict == "steady" or self.since is None:
            return f"steady {self.key}: {len(self.groups)} group(s) over {len(self.values)} runs"
        unit = metric_unit(self.key.rsplit("/", 1)[-1])
        ago = len(self.values) - self.since
        pct = self.change_pct
        change = f"{pct:+.2f} %" if pct is not None else f"{(self.after or 0.0) - (self.before or 0.0):+.4g} {unit}"
        build = f", build {self.build}" if self.build else ""
        watched = "" if self.gated or self.verdict != "regression" else " (reported, not gated)"
        return (
            f"{self.verdict.upper()}{watched} {self.key}: {change} ({self.before:.4g} -> {self.after:.4g} {unit}, "
            f"{self.sigmas:.1f} x the run-to-run spread {self.noise:.3g}) since run {self.runs[self.since]}{build} "
            f"({ago} run{'s' if ago != 1 else ''} ago, {len(self.values)} analysed)"
        )


def analyse(
    key: str, runs: Sequence[str], series: Sequence[Run], builds: Sequence[str] = (),
    detector: str = GATE_DETECTOR, min_group: int = MIN_GROUP, clear_factor: float | None = CLEAR_FACTOR,
) -> Trend:  # fmt: skip
    """One series' groups and the verdict on its newest group: against the group before it (a
    step), else against the best group before it (a drift of several steps); a change when the
    detector put a boundary there and it is at least the metric's relevant difference."""
    metric = key.rsplit("/", 1)[-1]
    values = [run_mean(r) for r in series]
    level = statistics.median(values)
    resolution_spec, relevant_spec = SCALE.get(metric, ((0.1, "pct"), (1.0, "pct")))
    resolution, relevant = _scaled(resolution_spec, level), _scaled(relevant_spec, level)
    groups = DETECTORS[detector](series, max(resolution, 1e-9))
    base = Trend(key, tuple(runs), tuple(values), tuple(groups), noise_sd(values), "steady", builds=tuple(builds))
    if len(groups) < 2:
        return base
    higher = metric_better(metric) == "higher"
    last, previous = groups[-1], groups[-2]
    # the history's own spread before the newest group: a metric that scatters run to run (a ping's
    # p99, jitter, the DUT's CPU share) needs a change beyond it (benchmarks/detection_power.py)
    relevant = max(relevant, RELEVANT_SPREADS * noise_sd(values[: last.start]) if last.start >= 2 else 0.0)
    # a newest group of fewer than min_group runs counts only with a clear change (clear_factor)
    confirmed = last.stop - last.start >= min_group
    if not confirmed and clear_factor is None:
        return base
    needed = relevant if confirmed else relevant * (clear_factor or 1.0)

    def worse(a: Group, b: Group) -> bool:  # a worse than b, by a relevant difference
        return (b.mean - a.mean if higher else a.mean - b.mean) >= needed

    best = max(groups[:-1], key=lambda g: g.mean if higher else -g.mean)
    if worse(last, previous):
        return Trend(**{**base.__dict__, "verdict": "regression", "since": last.start, "before": previous.mean,
                        "after": last.mean})  # fmt: skip
    if worse(last, best):  # a drift: several steps down from the best
        start = next(g.start for g in groups if g.start > best.start)  # the first step down from the best
        return Trend(**{**base.__dict__, "verdict": "regression", "since": start, "before": best.mean,
                        "after": last.mean})  # fmt: skip
    if worse(previous, last) and confirmed:
        return Trend(**{**base.__dict__, "verdict": "progression", "since": last.start, "before": previous.mean,
                        "after": last.mean})  # fmt: skip
    return base


def build_label(firmware: dict[str, str]) -> str:
    """A run's build as the page names it: `version build-digest` (and what was planted in it)."""
    planted = f"(planted: {firmware['planted']})" if firmware.get("planted") else None
    return " ".join(v for v in (firmware.get("version"), firmware.get("build"), planted) if v)


def trends(
    history: Sequence[RunNumbers], dut: str, profile: str, last: int = DEFAULT_RUNS, detector: str = GATE_DETECTOR
) -> list[Trend]:
    """Every trend metric's trend over the newest `last` runs of `dut` and `profile` (runs that
    lack a key are left out of its series; a run's repetitions are used where kept); none under
    MIN_RUNS."""
    runs = [r for r in history if r.dut == dut and r.profile == profile][-last:]
    keys = sorted({k for r in runs for k in r.values if k.rsplit("/", 1)[-1] in TREND_METRICS})
    out = []
    for key in keys:
        kept = [r for r in runs if key in r.values and math.isfinite(r.values[key])]
        if len(kept) >= MIN_RUNS:
            series: list[Run] = [run_value(r, key) for r in kept]
            builds = [build_label(r.firmware) for r in kept]
            out.append(analyse(key, [r.run for r in kept], series, builds, detector))
    return out


def trend_text(found: Sequence[Trend]) -> str:
    """The verdicts, changes first; the steady ones counted."""
    changed = [t for t in found if t.verdict != "steady"]
    lines = [t.line() for t in sorted(changed, key=lambda t: (t.verdict != "regression", t.key))]
    steady = len(found) - len(changed)
    none = f"no trend: fewer than {MIN_RUNS} runs on file"
    lines.append(f"{steady} of {len(found)} case metrics steady" if found else none)
    return "\n".join(lines)
