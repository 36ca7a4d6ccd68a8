"""How small a step the history gate catches, and how often it cries wolf: recorded histories of
a bench (benchmarks/record_history.py: real runs of the unchanged firmware, each with its
repetitions; idle, with a core busy, QEMU) replayed with planted steps.

A trial draws HISTORY runs and then AFTER more from one recording (with replacement: the runs of a
recording are the bench's own run-to-run spread), plants a step in the AFTER runs of one case
metric (throughput -1, -2, -3, -5, -10 %; UDP loss +0.1 and +0.5 points; latency +20 %) and runs
the gate (hil.report.trends.analyse) after each of them, as CI would after each run: the step is
caught within k runs when a regression is flagged by the k-th run after it. Recall = caught
trials / trials. False alarms: the same without a step, each evaluation of each case that flags a
regression in any of its metrics counts (per case-run), over at least --min-evaluations.

Prints, per recording, detector and metric class, the recall within 1, 3 and 5 runs for each
step and the false-alarm rate; exits 1 when the gate's configuration misses the goal on a
recording of the virtual bench (a 3 % throughput step caught within 5 runs in >= 90 % of trials,
<= 0.5 % false alarms per case-run), unless --figures-only.

  python -m benchmarks.detection_power benchmarks/data/*.jsonl [--trials 200]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hil.report.changepoints import DETECTORS, GATE_DETECTOR, Run
from hil.report.history import MetricsHistory, RunNumbers, run_value
from hil.report.trends import CLEAR_FACTOR, GATED_METRICS, MIN_GROUP, analyse
from hil.results.recorder import TREND_METRICS

HISTORY, AFTER = 10, 5  # runs before the step (a CI history's steady stretch), runs after it
WITHIN = (1, 3, 5)
# (metric class, the metrics it plants in, the steps: (label, how a run's value changes))
STEPS: dict[str, tuple[frozenset[str], tuple[tuple[str, float, str], ...]]] = {
    "throughput": (frozenset({"mbps", "kbps"}),
                   tuple((f"-{s:g} %", -s, "pct") for s in (1, 2, 3, 5, 10))),
    "loss": (frozenset({"loss_pct"}), (("+0.1 pt", 0.1, "abs"), ("+0.5 pt", 0.5, "abs"))),
    "latency": (frozenset({"median_ms", "latency_ms"}), (("+20 %", 20.0, "pct"),)),
}  # fmt: skip
GOAL_STEP, GOAL_RECALL, GOAL_FALSE_PCT = "-3 %", 90.0, 0.5
# (detector, min runs in the newest group, the change a newer group of fewer runs needs in relevant
# differences: None, never)
Config = tuple[str, int, float | None]
CONFIGS: tuple[Config, ...] = (
    *((d, g, None) for d in sorted(DETECTORS) for g in (1, 2)),
    (GATE_DETECTOR, MIN_GROUP, 1.5),
    (GATE_DETECTOR, MIN_GROUP, CLEAR_FACTOR),
    (GATE_DETECTOR, MIN_GROUP, 3.0),
)


@dataclass(frozen=True)
class Series:
    case: str
    key: str  # scenario/case/metric
    runs: list[Run]  # each run's repetitions (or its value)


def load(path: Path) -> list[RunNumbers]:
    runs = MetricsHistory(path).runs()
    if len(runs) < 4:
        raise SystemExit(f"{path}: {len(runs)} runs; a recording needs 4 or more (benchmarks/record_history.py)")
    return runs


def series_of(runs: Sequence[RunNumbers]) -> list[Series]:
    keys = sorted({k for r in runs for k in r.values if k.rsplit("/", 1)[-1] in TREND_METRICS})
    out = []
    for key in keys:
        kept = [r for r in runs if key in r.values]
        if len(kept) >= 4:
            out.append(Series(key.rsplit("/", 1)[0], key, [run_value(r, key) for r in kept]))
    return out


def stepped(run: Run, size: float, kind: str) -> Run:
    def one(v: float) -> float:
        return v * (1 + size / 100) if kind == "pct" else v + size

    return one(float(run)) if isinstance(run, int | float) else [one(float(v)) for v in run]


def flags(key: str, runs: Sequence[Run], detector: str, min_group: int, clear: float | None) -> bool:
    names = [f"R{i}" for i in range(len(runs))]
    found = analyse(key, names, runs, detector=detector, min_group=min_group, clear_factor=clear)
    return found.verdict == "regression"


def recall(s: Series, size: float, kind: str, trials: int, rng: random.Random, cfg: Config) -> list[int]:
    """Per trial, the first run after the step at which the gate flagged it (AFTER + 1: never)."""
    out = []
    for _ in range(trials):
        before = [rng.choice(s.runs) for _ in range(HISTORY)]
        after = [stepped(rng.choice(s.runs), size, kind) for _ in range(AFTER)]
        first = next((k for k in range(1, AFTER + 1) if flags(s.key, [*before, *after[:k]], *cfg)), AFTER + 1)
        out.append(first)
    return out


def false_alarms(
    series: Sequence[Series], trials: int, rng: random.Random, cfg: Config
) -> tuple[int, int, dict[str, int]]:
    """(case-run evaluations flagged, evaluations, flags per metric) on unchanged histories."""
    by_case: dict[str, list[Series]] = defaultdict(list)
    for s in series:
        by_case[s.case].append(s)
    flagged = evaluations = 0
    by_metric: dict[str, int] = defaultdict(int)
    for members in by_case.values():
        for _ in range(trials):
            drawn = {s.key: [rng.choice(s.runs) for _ in range(HISTORY + AFTER)] for s in members}
            for k in range(HISTORY + 1, HISTORY + AFTER + 1):
                evaluations += 1
                hit = [s.key for s in members if flags(s.key, drawn[s.key][:k], *cfg)]
                flagged += any(key.rsplit("/", 1)[-1] in GATED_METRICS for key in hit)  # what fails a run
                for key in hit:
                    by_metric[key.rsplit("/", 1)[-1]] += 1
    return flagged, evaluations, dict(by_metric)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.detection_power", description=__doc__.splitlines()[0])
    p.add_argument("recordings", nargs="+", type=Path, help="histories made by benchmarks/record_history.py")
    p.add_argument("--trials", type=int, default=200, help="trials per case metric and step")
    p.add_argument("--min-evaluations", type=int, default=300, help="unchanged case-run evaluations at least")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--figures-only", action="store_true", help="exit 0 whatever the figures")
    opt = p.parse_args(argv)
    gate: Config = (GATE_DETECTOR, MIN_GROUP, CLEAR_FACTOR)
    missed: list[str] = []
    for path in opt.recordings:
        runs = load(path)
        series = series_of(runs)
        print(f"\n== {path.name}: {len(runs)} recorded runs, {len(series)} case metrics (history {HISTORY} runs)")
        for cfg in CONFIGS:
            rng = random.Random(opt.seed)
            mark = "  <- the gate" if cfg == gate else ""
            clear = f", or one run {cfg[2]:g} x the relevant change" if cfg[2] else ""
            print(f"-- detector {cfg[0]}, newest group >= {cfg[1]} run(s){clear}{mark}")
            for cls, (metrics, steps) in STEPS.items():
                chosen = [s for s in series if s.key.rsplit("/", 1)[-1] in metrics]
                if not chosen:
                    continue
                for label, size, kind in steps:
                    firsts = [f for s in chosen for f in recall(s, size, kind, opt.trials, rng, cfg)]
                    rates = [100.0 * sum(f <= k for f in firsts) / len(firsts) for k in WITHIN]
                    within = ", ".join(f"{r:5.1f} % in {k}" for r, k in zip(rates, WITHIN, strict=True))
                    print(f"   {cls:10s} {label:8s} recall {within} ({len(chosen)} series x {opt.trials} trials)")
                    if cfg == gate and label == GOAL_STEP and "virtual" in path.name and rates[-1] < GOAL_RECALL:
                        missed.append(f"{path.name}: {label} caught within 5 runs in {rates[-1]:.1f} %")
            per_case = max(1, opt.min_evaluations // (AFTER * max(1, len({s.case for s in series}))) + 1)
            flagged, evaluations, by_metric = false_alarms(series, max(per_case, opt.trials // 4), rng, cfg)
            pct = 100.0 * flagged / evaluations
            which = ", ".join(f"{m} {n}" for m, n in sorted(by_metric.items(), key=lambda x: -x[1]))
            said = f"; by metric: {which}" if which else ""
            print(f"   false alarms (gated metrics): {flagged} of {evaluations} case-runs ({pct:.2f} %){said}")
            if cfg == gate and "virtual" in path.name and pct > GOAL_FALSE_PCT:
                missed.append(f"{path.name}: false alarms {pct:.2f} % of case-runs")
    goal = (f"goal: a {GOAL_STEP} throughput step within 5 runs in >= {GOAL_RECALL:g} %, <= {GOAL_FALSE_PCT} % "
            "false alarms")  # fmt: skip
    print(f"\n{goal}: " + ("; ".join(missed) if missed else "met on every virtual-bench recording"))
    return 1 if missed and not opt.figures_only else 0


if __name__ == "__main__":
    sys.exit(main())
