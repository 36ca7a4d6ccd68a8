"""Records every number of a run.

Each finished case appends one JSON line to ``results.jsonl`` at once (a killed run keeps what
it finished), writes its numbers as Allure 3 performance metrics (``*-perf.json``) and keeps a
row for the terminal summary.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hil.stats import Summary


@dataclass
class CaseRecord:
    scenario: str
    case: str
    dut: str
    unit: str
    values: list[float]
    median: float
    minimum: float
    maximum: float
    stdev: float
    theory: float | None
    efficiency_pct: float | None
    loss_pct: float | None = None
    jitter_ms: float | None = None
    generator_limited: bool = False
    threshold: dict[str, float] = field(default_factory=dict)
    verdict: str = "recorded"  # recorded -> passed | below threshold
    extra: dict[str, object] = field(default_factory=dict)


def make_record(
    scenario: str, case: str, dut: str, summary: Summary, theory: float | None, unit: str = "Mbit/s"
) -> CaseRecord:
    eff = 100.0 * summary.median / theory if theory else None
    return CaseRecord(
        scenario, case, dut, unit, list(summary.values), summary.median, summary.minimum, summary.maximum,
        summary.stdev, theory, eff,
    )  # fmt: skip


class Recorder:
    def __init__(self, results_dir: Path, allure_dir: Path | None) -> None:
        self.results_dir = results_dir
        self.allure_dir = allure_dir
        self.jsonl = results_dir / "results.jsonl"
        self.rows: list[CaseRecord] = []
        self.link: dict[str, object] = {}  # facts of the DUT's link (Wi-Fi RSSI, channel) kept with every record
        self.run_id = time.strftime("%Y%m%dT%H%M%S")
        results_dir.mkdir(parents=True, exist_ok=True)

    def set_link(self, facts: dict[str, object]) -> None:
        """The link as the DUT reported it when the test started (e.g. Wi-Fi RSSI and channel)."""
        self.link = dict(facts)

    def record(self, rec: CaseRecord, start: float, stop: float) -> None:
        """Writes the record before any threshold is checked."""
        self.rows.append(rec)
        if self.link:
            rec.extra.setdefault("link", dict(self.link))
        line = {"run": self.run_id, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **asdict(rec)}
        with self.jsonl.open("a") as f:
            f.write(json.dumps(line) + "\n")
            f.flush()
        if self.allure_dir is not None:
            self._write_metrics(rec, start, stop)

    def set_verdict(self, rec: CaseRecord, verdict: str) -> None:
        rec.verdict = verdict
        with self.jsonl.open("a") as f:
            verdict_line = {"run": self.run_id, "scenario": rec.scenario, "case": rec.case, "dut": rec.dut}
            f.write(json.dumps({**verdict_line, "verdict": verdict}) + "\n")

    def _write_metrics(self, rec: CaseRecord, start: float, stop: float) -> None:
        mid = f"{rec.scenario}/{rec.case}"
        better = "lower" if rec.unit == "ms" else "higher"
        suffix = "ms" if rec.unit == "ms" else "mbps"
        samples: list[tuple[str, float, str, str]] = [
            (f"median_{suffix}", rec.median, rec.unit, better),
            (f"min_{suffix}", rec.minimum, rec.unit, better),
            (f"max_{suffix}", rec.maximum, rec.unit, better),
            (f"stdev_{suffix}", rec.stdev, rec.unit, "lower"),
        ]
        if rec.efficiency_pct is not None:
            samples.append(("efficiency_pct", rec.efficiency_pct, "%", "higher"))
        if rec.loss_pct is not None:
            samples.append(("loss_pct", rec.loss_pct, "%", "lower"))
        if rec.jitter_ms is not None:
            samples.append(("jitter_ms", rec.jitter_ms, "ms", "lower"))
        for key in ("p99_ms", "avg_ms"):
            if isinstance(rec.extra.get(key), int | float):
                samples.append((key, float(rec.extra[key]), "ms", "lower"))  # type: ignore[arg-type]
        if rec.unit != "ms":
            for i, v in enumerate(rec.values, 1):
                samples.append((f"run{i}_{suffix}", v, rec.unit, better))
        metrics = [
            {
                "id": mid,
                "key": key,
                "value": round(value, 4),
                "start": int(start * 1000),
                "stop": int(stop * 1000),
                "title": f"{mid} {key}",
                "unit": unit,
                "better": better,
                "group": rec.scenario,
            }
            for key, value, unit, better in samples
        ]
        self.allure_dir.mkdir(parents=True, exist_ok=True)
        (self.allure_dir / f"{uuid.uuid4()}-perf.json").write_text(json.dumps(metrics, indent=1))


def summary_table(rows: list[CaseRecord]) -> list[str]:
    """The short table printed at the end of a run."""
    if not rows:
        return []
    head = (
        f"{'scenario/case':40s} {'median':>9s} {'min':>9s} {'max':>9s} {'sd':>6s} {'theory':>8s} "
        f"{'eff%':>6s} {'loss%':>7s}  verdict"
    )
    out = [head, "-" * len(head)]
    for r in rows:
        theory = f"{r.theory:8.2f}" if r.theory else f"{'-':>8s}"
        eff = f"{r.efficiency_pct:6.1f}" if r.efficiency_pct is not None else f"{'-':>6s}"
        loss = f"{r.loss_pct:7.3f}" if r.loss_pct is not None else f"{'-':>7s}"
        gen = " (generator-limited)" if r.generator_limited and r.verdict != "generator-limited" else ""
        out.append(
            f"{r.scenario + '/' + r.case:40s} {r.median:9.2f} {r.minimum:9.2f} {r.maximum:9.2f} {r.stdev:6.2f} "
            f"{theory} {eff} {loss}  {r.verdict}{gen}"
        )
    return out
