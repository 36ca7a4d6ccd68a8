"""Every run's numbers, kept across runs (``<results>/history/metrics.jsonl``, one line per
run), so a run's summary can show the change since an earlier run of the same DUT and profile
(the previous one, or one named by its run id) and the trend gate can find change points
(hil.report.trends): every metric of every case that has a direction (`history_values`), each
case's repetitions of its own number (`samples`), and the build measured (`firmware`:
hil.dut.build_identity), so that a step is pinned to a build."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hil.config.errors import ConfigError
from hil.report.summary import BENCH_FAULTS
from hil.results.recorder import PRIMARY_METRIC, CaseRecord, trend_values

MAX_SAMPLES = 32  # more values than this are one measurement's samples, not repetitions
REPEATED = ("mbps", "kbps")  # the metrics whose record values are the repetitions of the case's number

if TYPE_CHECKING:
    from hil.report.summary import SummaryRow


@dataclass(frozen=True)
class RunNumbers:
    run: str
    time: str
    dut: str
    profile: str
    values: dict[str, float]  # "scenario/case/metric" -> value
    firmware: dict[str, str] = field(default_factory=dict)  # version, build digest, config
    samples: dict[str, list[float]] = field(default_factory=dict)  # "scenario/case/metric" -> repetitions


class MetricsHistory:
    def __init__(self, path: Path) -> None:
        self.path = path

    def runs(self) -> list[RunNumbers]:
        """The runs on file, oldest first; a damaged line (a run killed while writing) is skipped."""
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text().splitlines():
            try:
                d = json.loads(line)
                out.append(RunNumbers(d["run"], d["time"], d["dut"], d["profile"], dict(d["values"]),
                                      dict(d.get("firmware", {})), dict(d.get("samples", {}))))  # fmt: skip
            except (ValueError, KeyError, TypeError):
                continue
        return out

    def compare_with(self, current: RunNumbers, named: str | None = None) -> RunNumbers | None:
        """The run to compare `current` with: the one named (an error if there is none of that
        id), else the latest earlier run of the same DUT and profile."""
        runs = [r for r in self.runs() if r.run != current.run]
        if named is not None:
            found = next((r for r in runs if r.run == named), None)
            if found is None:
                known = ", ".join(r.run for r in runs[-5:]) or "none"
                raise ConfigError(f"--compare-run {named}: no such run in {self.path} (latest: {known})")
            return found
        same = [r for r in runs if r.dut == current.dut and r.profile == current.profile]
        return same[-1] if same else None

    def add(self, numbers: RunNumbers) -> None:
        """Adds (or replaces) the run's line."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept = [r for r in self.runs() if r.run != numbers.run]
        lines = [json.dumps(r.__dict__) for r in [*kept, numbers]]
        self.path.write_text("\n".join(lines) + "\n")


def history_values(records: list[CaseRecord], rows: list[SummaryRow]) -> dict[str, float]:
    """A run's numbers as kept: every summary row (each case's number and each metric it has a
    limit on) and every trend metric of every case (hil.results.recorder.TREND_METRICS), but for
    a case a rule of hil.bench_faults judged the bench's (generator- or tester-limited): its
    numbers are the bench's, and a bench's bad day would read as the DUT's step in its history
    (as hil.results.baseline leaves them out of a baseline)."""
    benchs = {f"{rec.scenario}/{rec.case}" for rec in records if rec.verdict in BENCH_FAULTS}
    out = {r.key: r.value for r in rows if r.case not in benchs}
    for rec in records:
        if f"{rec.scenario}/{rec.case}" not in benchs:
            out |= {f"{rec.scenario}/{rec.case}/{name}": value for name, value in trend_values(rec).items()}
    return out


def history_samples(records: list[CaseRecord]) -> dict[str, list[float]]:
    """Each rate case's repetitions of its own number (the change-point analysis weighs a run by
    them); not a ping's replies, whose median is the case's number."""
    out = {}
    for rec in records:
        if rec.verdict in BENCH_FAULTS:  # the bench's numbers (history_values)
            continue
        metric = PRIMARY_METRIC.get(rec.unit, "mbps")
        if metric in REPEATED and 1 < len(rec.values) <= MAX_SAMPLES:
            out[f"{rec.scenario}/{rec.case}/{metric}"] = [round(float(v), 6) for v in rec.values]
    return out


def run_value(run: RunNumbers, key: str) -> float | list[float]:
    """A run's entry in a series: the repetitions of a rate where kept, else its value."""
    kept = run.samples.get(key) if key.rsplit("/", 1)[-1] in REPEATED else None
    return kept or run.values[key]
