"""The report's parts without a browser: case titles with their numbers and criteria, the run
summary (rows, margins, verdicts, change against an earlier run, CSV and HTML), the metrics
history, the fixture pruning, the offline finishing and the report check's title rules."""

import csv
import io
import json

import pytest

from hil.checks import case_title, criteria, headline
from hil.config.errors import ConfigError
from hil.config.thresholds import Limits
from hil.report.allure_results import BRING_UP_TITLES, prune_fixtures, write_summary_result
from hil.report.check import CaseEntry, pick_pages, title_problems
from hil.report.finish import ReportError, strip_analytics
from hil.report.history import MetricsHistory, RunNumbers
from hil.report.summary import FAILED, PASSED, summary_rows, to_csv, to_html
from hil.report.summary import headline as summary_headline
from hil.results.recorder import CaseRecord, Recorder, make_record
from hil.stats import summarize

pytestmark = pytest.mark.selftest


def _tcp(case: str, values: list[float], theory: float = 94.93, **threshold: float) -> CaseRecord:
    rec = make_record("baseline", case, "dut", summarize(values), theory)
    rec.threshold = dict(threshold)
    rec.verdict = "passed"
    return rec


def _stream(case: str, sent: int, lost: int) -> CaseRecord:
    pct = 100.0 * lost / sent
    rec = make_record("stress-x", case, "dut", summarize([pct]), None, unit="% lost")
    rec.loss_pct = pct
    rec.measured.update(sent=float(sent), lost=float(lost), late=0.0)
    return rec


def test_title_carries_the_number_and_the_criterion():
    rec = _tcp("tcp-dut_tx", [94.5, 94.61, 94.7])
    title = case_title("baseline/tcp-dut_tx", [(rec, Limits(min_mbps=93))])
    assert title == "baseline/tcp-dut_tx: median 94.61 Mbit/s = 99.7 % of 94.93; median 94.61 Mbit/s >= 93.00 Mbit/s"


def test_a_case_without_criterion_must_say_so_in_the_profile():
    with pytest.raises(ValueError, match="no_criterion"):
        Limits()
    with pytest.raises(ValueError, match="exclude each other"):
        Limits(min_mbps=1, no_criterion="for the record")
    limits = Limits(no_criterion="recorded for the thesis comparison")
    assert criteria({"mbps": 1.0}, limits) == "no criterion (recorded for the thesis comparison)"


def test_title_of_many_records_shows_the_total_and_names_the_streams_that_missed():
    streams = [_stream("s1-dut_rx", 1000, 0), _stream("s2-dut_rx", 1000, 30), _stream("all", 2000, 30)]
    extra = _stream("s3-dut_tx", 500, 0)
    checked = [(r, Limits(max_loss_pct=1)) for r in [*streams, extra]]
    title = case_title("stress-x: profile x", checked)
    # a missed criterion says so: never "1.500 % <= 1.000 %"
    assert title.startswith("stress-x: profile x: all 30 of 2000 lost (1.500 %); loss 1.500 % > 1.000 % MISSED")
    assert "1 of 3 others miss their criteria: s2-dut_rx (loss_pct 3.000 % > threshold 1.000 %)" in title
    assert headline(extra) == "0 of 500 lost (0.000 %)"


def test_summary_rows_margin_verdict_and_change():
    passed = _tcp("tcp-dut_tx", [94.5, 94.61, 94.7], min_mbps=93, min_efficiency_pct=98)
    missed = _tcp("udp-dut_rx", [80.0], min_mbps=90)
    missed.verdict = "below threshold"
    rows = summary_rows([passed, missed], previous={"baseline/tcp-dut_tx/mbps": 94.0})
    by_key = {r.key: r for r in rows}
    mbps = by_key["baseline/tcp-dut_tx/mbps"]
    assert mbps.criterion == ">= 93" and mbps.verdict == PASSED
    assert mbps.margin == pytest.approx(1.61) and mbps.margin_pct == pytest.approx(100 * 1.61 / 93)
    assert (mbps.minimum, mbps.maximum, mbps.repetitions) == (94.5, 94.7, 3)
    assert mbps.change == pytest.approx(0.61) and mbps.previous == 94.0
    assert by_key["baseline/tcp-dut_tx/efficiency_pct"].verdict == PASSED
    assert by_key["baseline/udp-dut_rx/mbps"].verdict == FAILED
    assert by_key["baseline/udp-dut_rx/mbps"].margin == pytest.approx(-10.0)
    assert by_key["baseline/udp-dut_rx/mbps"].change is None  # not in the earlier run: "new"
    assert summary_headline(rows, "R1").startswith("2 cases, 3 criteria: 2 met, 1 missed")


def test_a_bench_fault_is_not_a_pass_or_a_fail_of_the_dut():
    rec = _tcp("udp-dut_rx", [50.0], min_mbps=90)
    rec.verdict = "generator-limited"
    (row,) = summary_rows([rec])
    assert row.verdict == "generator-limited"


def test_summary_keeps_the_latest_record_of_a_case(tmp_path):
    recorder = Recorder(tmp_path, None)
    for rec in (_tcp("tcp-dut_tx", [50.0]), _tcp("udp-dut_rx", [90.0]), _tcp("tcp-dut_tx", [94.0])):
        recorder.record(rec, 0.0, 1.0)
    assert [(r.case, r.median) for r in recorder.latest()] == [("udp-dut_rx", 90.0), ("tcp-dut_tx", 94.0)]
    assert [r.case for r in recorder.latest("baseline", "tcp")] == ["tcp-dut_tx"]
    (row, _) = summary_rows(recorder.latest())
    assert row.value == 90.0


def test_summary_csv_and_html():
    rows = summary_rows([_tcp("tcp-dut_tx", [94.61], min_mbps=93)], previous={"baseline/tcp-dut_tx/mbps": 94.0})
    parsed = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert parsed[0]["key"] == "baseline/tcp-dut_tx/mbps" and float(parsed[0]["value"]) == 94.61
    page = to_html(rows, "Run summary <x>", sortable=True)
    assert "Run summary &lt;x&gt;" in page and "<script>" in page
    assert '<td data-v="0.648936" title="+0.61 Mbit/s">+0.6 %</td>' in page  # a change within noise: plain
    rows[0].change, rows[0].change_pct = -3.0, -3.2
    assert '<td class="down" data-v="-3.2" title="-3.00 Mbit/s">-3.2 %</td>' in to_html(rows, "t", sortable=True)
    assert "<script>" not in to_html(rows, "t", sortable=False)  # the report shows attachments without scripts


def test_history_compares_with_the_previous_run_of_the_same_dut_and_profile(tmp_path):
    hist = MetricsHistory(tmp_path / "h" / "metrics.jsonl")
    hist.add(RunNumbers("R1", "t1", "dut", "quick", {"k": 1.0}))
    hist.add(RunNumbers("R2", "t2", "other", "quick", {"k": 2.0}))
    hist.add(RunNumbers("R3", "t3", "dut", "full", {"k": 3.0}))
    now = RunNumbers("R4", "t4", "dut", "quick", {"k": 4.0})
    assert hist.compare_with(now).run == "R1"
    assert hist.compare_with(now, named="R3").run == "R3"  # a named baseline, whatever it ran
    with pytest.raises(ConfigError, match="no such run"):
        hist.compare_with(now, named="R9")
    hist.add(now)
    hist.add(RunNumbers("R4", "t4", "dut", "quick", {"k": 5.0}))  # written again: replaced
    assert [r.run for r in hist.runs()] == ["R1", "R2", "R3", "R4"] and hist.runs()[-1].values == {"k": 5.0}
    with hist.path.open("a") as f:
        f.write('{"run": "R5", "ti')  # a run killed while writing
    assert len(hist.runs()) == 4


def test_plumbing_fixtures_leave_the_case_pages(tmp_path):
    keep = BRING_UP_TITLES["dut_ready"]
    container = {
        "uuid": "c1",
        "befores": [{"name": "_mp_manager", "status": "passed"}, {"name": keep, "status": "passed"}],
        "afters": [
            {"name": "port_target_cache::finalizer", "status": "passed"},
            {"name": f"{keep}::<lambda>"},
            {"name": f"{keep}::1", "status": "passed"},
            {"name": "dut::close", "status": "broken"},  # a tear-down that failed stays in sight
        ],
    }
    (tmp_path / "c1-container.json").write_text(json.dumps(container))
    (tmp_path / "c2-container.json").write_text(json.dumps({"uuid": "c2", "befores": [{"name": "pytestconfig"}]}))
    assert prune_fixtures(tmp_path) == 5
    kept = json.loads((tmp_path / "c1-container.json").read_text())
    assert [e["name"] for e in kept["befores"] + kept["afters"]] == [keep, "dut::close"]
    assert not (tmp_path / "c2-container.json").exists()


def test_summary_result_is_an_allure_result_with_its_table(tmp_path):
    path = write_summary_result(
        tmp_path, title="Run summary", failed=True, dut="d", table_html="<table></table>", table_csv="a,b\n",
        start_ms=1, stop_ms=2, message="missed: x",
    )  # fmt: skip
    result = json.loads(path.read_text())
    assert result["status"] == "failed" and result["statusDetails"]["message"] == "missed: x"
    assert {a["type"] for a in result["attachments"]} == {"text/html", "text/csv"}
    assert all((tmp_path / a["source"]).exists() for a in result["attachments"])


def test_analytics_script_is_stripped_and_a_leftover_is_an_error(tmp_path):
    index = tmp_path / "index.html"
    index.write_text(
        '<body><div id="app"></div>\n    <script async src="https://www.googletagmanager.com/gtag/js?id=G-X">'
        "</script>\n    <script>\n        window.dataLayer = window.dataLayer || [];\n gtag('js');\n    </script>\n"
        "<script>real()</script></body>"
    )
    assert strip_analytics(index)
    assert "googletagmanager" not in index.read_text() and "real()" in index.read_text()
    assert not strip_analytics(index)
    index.write_text('<link href="https://www.googletagmanager.com/x">')
    with pytest.raises(ReportError, match="analytics reference remains"):
        strip_analytics(index)


def test_report_check_wants_a_number_and_criterion_on_every_hil_case():
    cases = [
        CaseEntry("1", "baseline/tcp-dut_tx: median 94.61 Mbit/s; median 94.61 >= 93", "passed", "HIL matrix, DUT d",
                  "baseline", ""),
        CaseEntry("2", "bidirectional TCP, both directions at once", "passed", "HIL matrix, DUT d", "bidir", ""),
        CaseEntry("3", "mss_dut/dut_tx-mss536", "failed", "HIL matrix, DUT d", "mss", "config reports TCP_MSS 1460"),
        CaseEntry("4", "latency", "broken", "HIL matrix, DUT d", "latency", ""),
        CaseEntry("5", "test_config_errors", "passed", "suite self-tests", "selftest: config", ""),
        CaseEntry("6", "Run summary", "passed", "Run summary", "every number", ""),
    ]  # fmt: skip
    problems = title_problems(cases)
    assert len(problems) == 2 and "bidirectional TCP" in problems[0] and "latency" in problems[1]
    pages = ["summary", "failed case", "baseline", "bidir", "mss", "latency"]  # the failed one: mss's
    assert [name for name, _ in pick_pages(cases)] == pages
