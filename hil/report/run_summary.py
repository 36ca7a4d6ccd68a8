"""The run's summary when a session ends (fixtures/report.py calls it): the latest record of
every case against its criteria, compared with an earlier run from the history, and the trends
over the history's recent runs (hil.report.trend_page)."""

from __future__ import annotations

import time
from pathlib import Path

from hil.report.allure_results import write_summary_result
from hil.report.history import MetricsHistory, RunNumbers, history_samples, history_values
from hil.report.rfc2544_page import write_rfc2544_page
from hil.report.summary import FAILED, REGRESSED, headline, summary_rows, to_csv, to_html
from hil.report.trend_page import write_trend_page
from hil.report.trends import Trend
from hil.results.findings import findings, findings_text
from hil.results.recorder import Recorder


def write_run_summary(
    recorder: Recorder, dut: str, profile: str, history: MetricsHistory, compare_run: str | None,
    allure_dir: Path | None, started: float, trend_gate: bool = False,
) -> tuple[Path, list[Trend]]:  # fmt: skip
    """The run's summary (every case and metric against its criterion, and the change against the
    latest earlier run of the same DUT and profile, or `compare_run`) as CSV and HTML beside the
    results and as an Allure result of its own; the run's numbers join the history. Returns the HTML
    and the regressions the trends found over the history (this run included)."""
    records = recorder.latest()
    current_rows = summary_rows(records)
    numbers = RunNumbers(
        recorder.run_id,
        time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        dut,
        profile,
        history_values(records, current_rows),
        dict(recorder.firmware),
        history_samples(records),
    )
    base = history.compare_with(numbers, compare_run)
    rows = summary_rows(records, base.values if base is not None else None)
    history.add(numbers)
    compared = f"{base.run} ({base.time})" if base is not None else None
    title = f"Run summary {recorder.run_id}, DUT {dut}, profile {profile}: {headline(rows, compared)}"
    out = recorder.results_dir
    found = findings(records)
    (out / "findings.txt").write_text(findings_text(found))
    (out / "summary.csv").write_text(to_csv(rows))
    (out / "summary.html").write_text(to_html(rows, title, sortable=True, found=found))
    write_rfc2544_page(records, out, dut, recorder.run_id, allure_dir, started)
    over_history = write_trend_page(history.runs(), out, dut, profile, allure_dir, started, gate=trend_gate)
    regressed = [t for t in over_history if t.verdict == "regression" and t.gated]
    if allure_dir is None:
        return out / "summary.html", regressed
    missed = [f"{r.key} {r.value:g} {r.unit} (criterion {r.criterion})" for r in rows if r.verdict == FAILED]
    missed += [
        f"{r.key} {r.value:g} {r.unit} regressed (baseline {r.baseline:g}, limit {r.baseline_limit:g})"
        for r in rows
        if r.verdict == REGRESSED and r.baseline is not None and r.baseline_limit is not None
    ]
    write_summary_result(
        allure_dir,
        title=title,
        failed=bool(missed),
        dut=dut,
        table_html=to_html(rows, title, sortable=False, found=found),
        findings=findings_text(found) if found else None,
        table_csv=to_csv(rows),
        start_ms=int(started * 1000),
        stop_ms=int(time.time() * 1000),
        message=("missed: " + "; ".join(missed)) if missed else None,
    )
    return out / "summary.html", regressed
