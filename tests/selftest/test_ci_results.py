"""What CI reads of a run: the exit code's classes, the baseline and its regression gate, the
summary's baseline columns and the JUnit properties of a case."""

import json
from pathlib import Path

import pytest
from _pytest.outcomes import Failed

from hil.checks import BenchFault, Regression, baseline_note
from hil.config.errors import ConfigError
from hil.config.thresholds import RegressionTolerance, ThresholdProfile
from hil.errors import BenchError, ConsoleTimeout, DutError
from hil.exit_codes import ExitCode, classify, run_code
from hil.report.junit_numbers import case_properties
from hil.report.summary import REGRESSED, summary_rows, to_html
from hil.results.baseline import compare, load_baseline, main, make_summary, record_values
from hil.results.recorder import CaseRecord, Recorder, make_record
from hil.stats import summarize

pytestmark = pytest.mark.selftest


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (BenchFault("the traffic generator could not reach the offered rate"), ExitCode.BENCH_FAULT),
        (BenchError("flasher openocd: no debug probe attached"), ExitCode.BENCH_FAULT),
        (Failed("Timeout (>600.0s) from pytest-timeout."), ExitCode.BENCH_FAULT),
        (AssertionError("BELOW THRESHOLD: baseline/tcp-dut_tx: median 80.00 Mbit/s < threshold 93.00"), 1),
        (Regression("baseline/tcp-dut_tx: mbps 85.000 < 92.000"), ExitCode.DUT_FAILED),
        (DutError("the DUT does not forward"), ExitCode.DUT_FAILED),
        (ConsoleTimeout("iperf did not finish"), ExitCode.DUT_FAILED),
        (ConfigError("threshold profile 'p' has no limits for baseline/x"), ExitCode.USAGE_ERROR),
        (KeyError("extra"), ExitCode.SUITE_ERROR),
    ],
)
def test_each_failure_says_whose_it_is(exc: BaseException, code: ExitCode) -> None:
    assert classify(exc) == code


def test_a_dut_failure_is_never_hidden_behind_a_bench_fault() -> None:
    assert run_code([]) == ExitCode.PASSED
    assert run_code([ExitCode.BENCH_FAULT, ExitCode.BENCH_FAULT]) == 75
    assert run_code([ExitCode.BENCH_FAULT, ExitCode.DUT_FAILED, ExitCode.SUITE_ERROR]) == 1
    assert run_code([ExitCode.BENCH_FAULT, ExitCode.USAGE_ERROR]) == 4


def _tcp(median: float, values: list[float] | None = None, case: str = "tcp-dut_tx") -> CaseRecord:
    return make_record("baseline", case, "virtual-dut", summarize(values or [median]), theory=94.93)


def _known_good(tmp_path: Path) -> Path:
    """A results.jsonl of two runs; the second is the known-good one, one of its cases a bench fault."""
    for run, medians in (("20261124T100000", [80.0, 80.0]), ("20261124T110000", [94.8, 94.9, 95.0])):
        recorder = Recorder(tmp_path, None, profile="quick")
        recorder.run_id = run
        rec = _tcp(94.9, medians)
        recorder.record(rec, 0.0, 1.0)
        recorder.set_verdict(rec, "passed")
        fault = _tcp(40.0, case="udp-dut_rx")
        recorder.record(fault, 0.0, 1.0)
        recorder.set_verdict(fault, "generator-limited")
    return tmp_path / "results.jsonl"


def test_a_baseline_is_the_latest_run_of_a_results_file_without_its_bench_faults(tmp_path: Path) -> None:
    base = load_baseline(_known_good(tmp_path))
    assert base.run == "20261124T110000" and base.dut == "virtual-dut" and base.profile == "quick"
    known = base.cases["baseline/tcp-dut_tx"]["mbps"]
    assert known.median == 94.9 and known.sd == pytest.approx(0.1) and known.n == 3
    assert "baseline/udp-dut_rx" not in base.cases and base.left_out == {
        "baseline/udp-dut_rx": "verdict generator-limited"
    }
    older = load_baseline(Path(f"{tmp_path / 'results.jsonl'}@20261124T100000"))
    assert older.cases["baseline/tcp-dut_tx"]["mbps"].median == 80.0


def test_the_baseline_summary_is_made_with_one_command_and_reads_back_the_same(tmp_path: Path) -> None:
    out = tmp_path / "baselines" / "virtual.json"
    assert main([str(_known_good(tmp_path)), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["format"] == "hil-baseline/1" and doc["run"] == "20261124T110000"
    again = load_baseline(out)
    assert again.cases == load_baseline(tmp_path / "results.jsonl").cases
    assert make_summary(again)["cases"] == doc["cases"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "no records"),
        ("{not json\n{}\n", "line 1 is not JSON"),
        ('{"a": 1}\n', "line 1 is not a results.jsonl record"),
        ('{"format": "other"}', "not a baseline summary"),
        ('{"format": "hil-baseline/1", "run": "r", "dut": "d", "cases": {}}', "not a hil-baseline/1 summary"),
    ],
)
def test_a_bad_baseline_file_is_one_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / ("base.json" if content.startswith('{"format"') else "results.jsonl")
    path.write_text(content)
    with pytest.raises(ConfigError, match=message) as exc:
        load_baseline(path)
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(ConfigError, match="file not found"):
        load_baseline(tmp_path / "missing.jsonl")


def test_a_regression_is_worse_than_the_baseline_by_more_than_floor_plus_k_sd(tmp_path: Path) -> None:
    known = load_baseline(_known_good(tmp_path)).cases["baseline/tcp-dut_tx"]
    tolerance = RegressionTolerance(floor_pct=3, k_sd=2)
    allowed = 94.9 * 0.03 + 2 * (0.1**2 + 0.0**2) ** 0.5  # 2.847 + 0.2
    (same,) = compare(_tcp(94.0), known, tolerance)
    assert not same.regressed and same.allowed == pytest.approx(allowed) and same.limit == pytest.approx(94.9 - allowed)
    (slower,) = compare(_tcp(85.4), known, tolerance)  # the link 10 % slower
    assert slower.regressed
    message = slower.message("baseline/tcp-dut_tx", tolerance)
    assert message.startswith("baseline/tcp-dut_tx: mbps 85.400 Mbit/s < 91.853 Mbit/s = baseline 94.900 Mbit/s")
    assert "3 % of the baseline + 2 x sd" in message and "change -10.0 %" in message
    # a run whose repetitions scatter (a defect's 94.6 / 94.5 / 70) widens nothing: the baseline's sd counts
    (noisy,) = compare(_tcp(91.5, [89.0, 91.5, 94.0]), known, tolerance)
    assert noisy.allowed == pytest.approx(allowed) and noisy.regressed


def test_latency_regresses_upwards_and_a_tolerance_may_name_its_metrics() -> None:
    base_rec = make_record("latency", "pc_to_dut", "d", summarize([0.20, 0.21, 0.22]), None, unit="ms")
    base_rec.measured["p99_ms"] = 0.4
    line = {"run": "r", "dut": "d", **base_rec.__dict__}
    base = {k: v for k, v in line.items() if k in CaseRecord.__dataclass_fields__}
    known = record_values(base)
    tolerance = RegressionTolerance(floor_pct=50, floor_abs=0.05, k_sd=3, metrics=["median_ms", "p99_ms"])
    now = make_record("latency", "pc_to_dut", "d", summarize([0.50, 0.51, 0.52]), None, unit="ms")
    now.measured["p99_ms"] = 0.45
    by_metric = {c.metric: c for c in compare(now, known, tolerance)}
    assert by_metric["median_ms"].regressed and by_metric["median_ms"].better == "lower"
    assert not by_metric["p99_ms"].regressed  # 0.45 <= 0.4 + 0.2 + 0.05


def test_a_tolerance_needs_a_floor_and_a_profile_names_a_missing_one() -> None:
    with pytest.raises(ValueError, match="floor_pct or floor_abs must be above 0"):
        RegressionTolerance(k_sd=3)
    profile = ThresholdProfile.model_validate(
        {
            "profile": "p",
            "scenarios": {"baseline": {"default": {"min_mbps": 1}}},
            "regression": {"latency": {"floor_pct": 5}},
        }
    )
    assert profile.tolerance("latency").floor_pct == 5
    with pytest.raises(ConfigError, match=r"no `regression: baseline:` or `regression: default:` entry"):
        profile.tolerance("baseline")


def _regressed_record(tmp_path: Path) -> CaseRecord:
    known = load_baseline(_known_good(tmp_path)).cases["baseline/tcp-dut_tx"]
    rec = _tcp(85.4)
    rec.threshold = {"min_efficiency_pct": 85.0}  # the fixed threshold alone passes
    tolerance = RegressionTolerance(floor_pct=3, k_sd=2)
    rec.baseline = {c.metric: c.as_fields("baseline/tcp-dut_tx", tolerance) for c in compare(rec, known, tolerance)}
    rec.verdict = "regression"
    return rec


def test_the_summary_shows_measured_baseline_and_threshold_for_every_number(tmp_path: Path) -> None:
    rec = _regressed_record(tmp_path)
    rows = {r.metric: r for r in summary_rows([rec])}
    assert rows["mbps"].verdict == REGRESSED and rows["mbps"].baseline == 94.9
    assert rows["mbps"].baseline_limit == pytest.approx(91.853, abs=0.001)
    assert rows["efficiency_pct"].verdict == "pass" and rows["efficiency_pct"].criterion == ">= 85"
    page = to_html(list(rows.values()), "t", sortable=True)
    assert "regression limit" in page and "&gt;= 91.85" in page and 'class="REGRESSION"' in page
    assert "regression limit" not in to_html(summary_rows([_tcp(94.9)]), "t", sortable=True)  # no baseline, no column
    assert "baseline 94.90 Mbit/s, regression below 91.85 Mbit/s REGRESSED" in baseline_note(rec)


def test_every_number_of_a_case_is_a_junit_property(tmp_path: Path) -> None:
    props = dict(case_properties(_regressed_record(tmp_path)))
    key = "baseline/tcp-dut_tx"
    assert props[f"{key}/mbps"] == 85.4 and props[f"{key}/theory_mbps"] == 94.93
    assert props[f"{key}/efficiency_pct"] == pytest.approx(89.96, abs=0.01)
    assert props[f"{key}/min_efficiency_pct"] == 85.0 and props[f"{key}/verdict"] == "regression"
    assert props[f"{key}/baseline_mbps"] == 94.9 and props[f"{key}/regression_limit_mbps"] == pytest.approx(91.853)
    runs = dict(case_properties(_tcp(94.0, [93.0, 94.0, 95.0])))
    assert runs[f"{key}/run_1"] == 93.0 and runs[f"{key}/repetitions"] == 3 and runs[f"{key}/sd_mbps"] == 1.0


def test_junit_numbers_names_cases_that_ran_without_a_number(tmp_path: Path) -> None:
    from hil.report.junit_numbers import summarize

    xml = tmp_path / "junit.xml"
    xml.write_text(
        '<testsuites><testsuite name="hil">'
        '<testcase classname="tests.hil.test_scenarios" name="a"><properties>'
        '<property name="baseline/tcp-dut_tx/mbps" value="94.9"/></properties></testcase>'
        '<testcase classname="tests.hil.test_scenarios" name="b"><skipped message="n/a"/></testcase>'
        '<testcase classname="tests.hil.test_scenarios" name="c"><failure message="x"/></testcase>'
        "</testsuite></testsuites>"
    )
    line, bare = summarize(xml)
    assert line.endswith("2 cases ran (1 failed), 1 skipped; 1 recorded numbers as properties")
    assert bare == ["tests.hil.test_scenarios::c"]
