"""The regression gate's baseline: the numbers of a known-good run, read from that run's
``results.jsonl`` (its latest run) or from a summary made from it (``make_summary``), and compared
case by case with this run's numbers.

A case regresses when its median is worse than the baseline's by more than the tolerance of its
scenario (threshold profile, ``regression:``): ``floor_pct`` % of the baseline's median, plus
``floor_abs`` in the metric's unit, plus ``k_sd`` times the baseline's standard deviation over its
repetitions (never this run's: a defect that scatters the repetitions must not widen its own
allowance). Worse is lower for throughput and efficiency, higher for everything else.

    python -m hil.results.baseline RESULTS_JSONL -o BASELINE_JSON   # one command to update it
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from hil.config.errors import ConfigError
from hil.config.thresholds import RegressionTolerance
from hil.results.recorder import PRIMARY_METRIC, SPREAD_METRIC, CaseRecord, metric_better, metric_unit

FORMAT = "hil-baseline/1"
# verdicts whose numbers describe the DUT: a bench fault's numbers are no baseline
USABLE_VERDICTS = ("passed", "no criterion", "recorded")


@dataclass(frozen=True)
class BaselineValue:
    median: float
    sd: float
    n: int


@dataclass(frozen=True)
class Baseline:
    source: str  # the file it was read from
    run: str  # the run id of the known-good run
    time: str
    dut: str
    profile: str
    cases: dict[str, dict[str, BaselineValue]]  # "scenario/case" -> metric -> value
    left_out: dict[str, str]  # "scenario/case" -> why its numbers are not a baseline

    def describe(self) -> str:
        return f"run {self.run} of DUT {self.dut} ({self.time}, {self.source})"


@dataclass(frozen=True)
class Comparison:
    """One metric of a case against the baseline."""

    metric: str
    measured: float
    baseline: float
    baseline_sd: float
    measured_sd: float
    allowed: float  # how far worse than the baseline the median may be (in the metric's unit)
    limit: float  # the worst median that passes
    better: str  # "higher" | "lower"
    regressed: bool

    def message(self, case: str, tolerance: RegressionTolerance) -> str:
        unit = metric_unit(self.metric)
        u = f" {unit}" if unit else ""
        rel = "<" if self.better == "higher" else ">"
        change = 100.0 * (self.measured - self.baseline) / self.baseline if self.baseline else math.inf
        return (
            f"{case}: {self.metric} {self.measured:.3f}{u} {rel} {self.limit:.3f}{u} = baseline "
            f"{self.baseline:.3f}{u} {'-' if self.better == 'higher' else '+'} allowed {self.allowed:.3f}{u} "
            f"({tolerance.describe()}; baseline sd {self.baseline_sd:.3f}, this run's {self.measured_sd:.3f}); "
            f"change {change:+.1f} %"
        )

    def as_fields(self, case: str, tolerance: RegressionTolerance) -> dict[str, object]:
        """The comparison as recorded (results.jsonl, the report): numbers, tolerance, and the
        message when the case regressed."""
        out: dict[str, object] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}
        out["tolerance"] = tolerance.describe()
        if self.regressed:
            out["why"] = self.message(case, tolerance)
        return out


def compare(rec: CaseRecord, base: dict[str, BaselineValue], tolerance: RegressionTolerance) -> list[Comparison]:
    """Every compared metric of the record that the baseline has (the case's number unless the
    tolerance names its metrics)."""
    metrics = rec.metrics()
    default_metric = PRIMARY_METRIC.get(rec.unit, "mbps")
    sd_key = SPREAD_METRIC.get(default_metric)
    names = tolerance.metrics or [default_metric]
    out = []
    for name in names:
        value, known = metrics.get(name), base.get(name)
        if value is None or known is None:
            continue
        sd_now = metrics.get(sd_key, 0.0) if sd_key and name == default_metric else 0.0
        allowed = (
            abs(known.median) * tolerance.floor_pct / 100.0
            + tolerance.floor_abs
            + tolerance.k_sd * known.sd  # the baseline's spread: a run that scatters widens nothing
        )
        better = metric_better(name)
        limit = known.median - allowed if better == "higher" else known.median + allowed
        regressed = value < limit if better == "higher" else value > limit
        out.append(Comparison(name, value, known.median, known.sd, sd_now, allowed, limit, better, regressed))
    return out


def record_values(line: dict[str, object]) -> dict[str, BaselineValue]:
    """Every metric of one results.jsonl record line (a tolerance may name any of them), the
    case's own number with its spread over the repetitions."""
    rec = CaseRecord(**{k: line[k] for k in CaseRecord.__dataclass_fields__ if k in line})  # type: ignore[arg-type]
    own = PRIMARY_METRIC.get(rec.unit, "mbps")
    sd_key = SPREAD_METRIC.get(own)
    metrics = rec.metrics()
    own_sd = float(metrics.get(sd_key, 0.0)) if sd_key else 0.0
    return {
        name: BaselineValue(float(value), own_sd if name == own else 0.0, len(rec.values))
        for name, value in metrics.items()
        if not name.startswith("sd_")
    }


def from_results(path: Path, run: str | None = None) -> Baseline:
    """The baseline of a results.jsonl: its latest run (or the run named), each case's latest
    record; a case whose verdict was a bench fault or a missed threshold is left out, with why."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ConfigError(f"--baseline {path}: cannot read: {exc.strerror}") from None
    records: list[dict[str, object]] = []
    for i, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            if i == len(lines):  # a run killed while writing its last line
                continue
            raise ConfigError(f"--baseline {path}: line {i} is not JSON") from None
        if not isinstance(line, dict) or "run" not in line or "scenario" not in line:
            raise ConfigError(f"--baseline {path}: line {i} is not a results.jsonl record (no run/scenario)")
        records.append(line)
    runs = list(dict.fromkeys(str(r["run"]) for r in records))
    if not runs:
        raise ConfigError(f"--baseline {path}: no records (a results.jsonl of a finished run is needed)")
    chosen = run or runs[-1]
    if chosen not in runs:
        raise ConfigError(f"--baseline {path}: no run {chosen} (runs: {', '.join(runs[-5:])})")
    cases: dict[str, dict[str, BaselineValue]] = {}
    verdicts: dict[str, str] = {}
    first: dict[str, object] = {}
    for line in (r for r in records if r["run"] == chosen):
        key = f"{line['scenario']}/{line['case']}"
        if "values" in line:
            try:
                cases[key] = record_values(line)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"--baseline {path}: record {key} is damaged: {exc}") from None
            verdicts[key] = str(line.get("verdict", "recorded"))
            first = first or line
        elif "verdict" in line:
            verdicts[key] = str(line["verdict"])
    left_out = {k: f"verdict {v}" for k, v in verdicts.items() if v not in USABLE_VERDICTS and k in cases}
    for key in left_out:
        del cases[key]
    if not cases:
        raise ConfigError(f"--baseline {path}: run {chosen} has no case whose numbers describe the DUT")
    time_, dut, profile = (str(first.get(k, "")) for k in ("time", "dut", "profile"))
    return Baseline(str(path), chosen, time_, dut, profile, cases, left_out)


def make_summary(base: Baseline) -> dict[str, object]:
    """The baseline as a small JSON document: what a repository keeps (baselines/<bench>.json)."""
    return {
        "format": FORMAT,
        "made": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "from": base.source,
        "run": base.run,
        "time": base.time,
        "dut": base.dut,
        "profile": base.profile,
        "cases": {case: {m: asdict(v) for m, v in metrics.items()} for case, metrics in sorted(base.cases.items())},
        "left_out": base.left_out,
    }


def from_summary(path: Path, doc: dict[str, object]) -> Baseline:
    try:
        cases_doc = doc["cases"]
        if not isinstance(cases_doc, dict) or not cases_doc:
            raise ValueError("`cases` is empty")
        cases = {
            str(case): {str(m): BaselineValue(float(v["median"]), float(v["sd"]), int(v["n"])) for m, v in ms.items()}
            for case, ms in cases_doc.items()
        }
        left = doc.get("left_out", {})
        return Baseline(
            str(path), str(doc["run"]), str(doc.get("time", "")), str(doc["dut"]), str(doc.get("profile", "")),
            cases, dict(left) if isinstance(left, dict) else {},
        )  # fmt: skip
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"--baseline {path}: not a {FORMAT} summary ({type(exc).__name__}: {exc})") from None


def load_baseline(path: Path) -> Baseline:
    """A baseline from a results.jsonl (its latest run; `FILE@RUN` names another run) or from a
    summary written by `make_summary`."""
    text_path, _, run = str(path).partition("@")
    path = Path(text_path)
    if not path.is_file():
        raise ConfigError(f"--baseline {path}: file not found")
    if path.suffix == ".json":
        try:
            doc = json.loads(path.read_text())
        except ValueError as exc:
            raise ConfigError(f"--baseline {path}: not valid JSON ({exc})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ConfigError(f'--baseline {path}: not a baseline summary (expected "format": "{FORMAT}")')
        return from_summary(path, doc)
    return from_results(path, run or None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hil.results.baseline",
        description="Makes (or updates) a baseline for --baseline from a known-good run's results.jsonl.",
    )
    parser.add_argument("results", type=Path, help="results.jsonl of the known-good run (FILE@RUN for another run)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the baseline file to write (.json)")
    opt = parser.parse_args(argv)
    if opt.output.suffix != ".json":
        parser.error(f"--output {opt.output}: a baseline summary is a .json file")
    try:
        base = load_baseline(opt.results)
    except ConfigError as exc:
        print(f"baseline: {exc}", file=sys.stderr)
        return 4
    opt.output.parent.mkdir(parents=True, exist_ok=True)
    opt.output.write_text(json.dumps(make_summary(base), indent=1) + "\n")
    print(f"baseline: {opt.output}: {len(base.cases)} cases of {base.describe()}")
    for case, why in base.left_out.items():
        print(f"baseline: left out {case} ({why}: its numbers do not describe a good DUT)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
