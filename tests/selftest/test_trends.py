"""Trends over the run history (hil.report.trends, hil.report.trend_page): a synthetic history of
30 runs with the run-to-run spread measured on these benches, a 3 % step planted in one case's
throughput ten runs ago, a slow drift in another, the rest unchanged."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from hil.report.changepoints import DETECTORS, noise_sd
from hil.report.history import RunNumbers
from hil.report.trend_page import write_trend_page
from hil.report.trends import MIN_RUNS, analyse, trends

pytestmark = pytest.mark.selftest

# (case metric, its level, its run-to-run standard deviation as measured here: the quick profile's
# medians on an idle host; the delay line's ladder is the bench's steadiest figure)
CASES = [
    ("baseline/tcp-dut_rx/mbps", 94.5, 0.25),  # 94.3-94.9 Mbit/s over runs (thresholds/virtual-100m)
    ("baseline/tcp-dut_tx/mbps", 94.5, 0.25),
    ("baseline/udp-dut_rx/mbps", 89.9, 0.15),
    ("window_dut/dut_rx-wnd16/mbps", 9.25, 0.01),  # 99.6-99.9 % of 9.28 Mbit/s
    ("latency/pc_to_dut/median_ms", 0.25, 0.03),  # a ping's median moves with the host's load
    ("capacity/dut_rx-l1448/mbps", 93.0, 0.4),
]
STEP_AT = 20  # of 30: the step is ten runs old
DRIFTING = "baseline/udp-dut_rx/mbps"


def history(step_pct: float = -3.0, drift_pct_per_run: float = 0.0, seed: int = 7) -> list[RunNumbers]:
    rng = random.Random(seed)
    runs = []
    for i in range(30):
        values = {}
        for key, level, sd in CASES:
            v = level + rng.gauss(0, sd)
            if key == "baseline/tcp-dut_rx/mbps" and i >= STEP_AT:
                v += level * step_pct / 100
            if key == DRIFTING:
                v += level * drift_pct_per_run / 100 * i
            values[key] = v
        runs.append(RunNumbers(f"R{i:02d}", f"2026-11-{i + 1:02d}", "host-dut", "quick", values))
    return runs


def test_a_three_percent_step_ten_runs_ago_is_a_regression_from_that_run() -> None:
    found = {t.key: t for t in trends(history(), "host-dut", "quick")}
    step = found["baseline/tcp-dut_rx/mbps"]
    assert step.verdict == "regression" and step.runs[step.since] == f"R{STEP_AT:02d}", step.line()
    assert step.change_pct == pytest.approx(-3.0, abs=0.5)
    assert "10 runs ago" in step.line()
    # (91.7 Mbit/s after the step: above the thresholds' 89 and within the regression gate's 5 % of
    # a baseline: no single run fails; the trend sees it)
    others = [t for k, t in found.items() if k != "baseline/tcp-dut_rx/mbps"]
    assert others and all(t.verdict == "steady" for t in others), [t.line() for t in others if t.verdict != "steady"]


@pytest.mark.parametrize("seed", range(5))
def test_unchanged_cases_stay_steady_over_seeds(seed: int) -> None:
    found = trends(history(step_pct=0.0, seed=100 + seed), "host-dut", "quick")
    assert all(t.verdict == "steady" for t in found), [t.line() for t in found if t.verdict != "steady"]


def test_a_slow_drift_no_single_run_shows_is_caught() -> None:
    # -0.1 % a run: 0.09 Mbit/s, under a third of the run-to-run spread; 2.9 % over the 30 runs
    found = {t.key: t for t in trends(history(step_pct=0.0, drift_pct_per_run=-0.1), "host-dut", "quick")}
    drift = found[DRIFTING]
    assert drift.verdict == "regression" and drift.change_pct is not None and drift.change_pct < -1.0, drift.line()


def test_a_progression_and_the_direction_of_a_latency() -> None:
    found = {t.key: t for t in trends(history(step_pct=+3.0), "host-dut", "quick")}
    assert found["baseline/tcp-dut_rx/mbps"].verdict == "progression"
    rising = [0.25] * 15 + [0.40] * 15  # a ping's median up: worse
    t = analyse("latency/pc_to_dut/median_ms", [f"R{i}" for i in range(30)], rising)
    assert t.verdict == "regression" and t.since == 15


def test_too_few_runs_and_other_duts_are_left_out() -> None:
    runs = history()
    assert trends(runs[: MIN_RUNS - 1], "host-dut", "quick") == []
    assert trends(runs, "other-dut", "quick") == []
    assert trends(runs, "host-dut", "full") == []


@pytest.mark.parametrize("detector", sorted(DETECTORS))
def test_the_noise_and_the_groups(detector: str) -> None:
    values = [10.0 + 0.01 * (i % 3) for i in range(10)] + [12.0 + 0.01 * (i % 3) for i in range(10)]
    assert noise_sd([10.0] * 10 + [12.0] * 10) == pytest.approx(0.002 * 11.0)  # steady halves: the floor
    groups = DETECTORS[detector](values, 0.05)
    assert [(g.start, g.stop, round(g.mean)) for g in groups] == [(0, 10, 10), (10, 20, 12)]


def test_repetitions_weigh_a_run_and_a_scattered_defect_does_not_hide_itself() -> None:
    # the defect scatters its repetitions (94.6 / 94.5 / 70): its own spread is no allowance
    steady = [[94.5 + 0.05 * ((i + k) % 3 - 1) for k in range(3)] for i in range(12)]
    scattered = [[94.6, 94.5, 70.0]] * 3
    t = analyse("baseline/tcp-dut_tx/mbps", [f"R{i}" for i in range(15)], [*steady, *scattered])
    assert t.verdict == "regression" and t.since == 12, t.line()


def test_a_loss_from_none_to_three_tenths_of_a_percent() -> None:
    t = analyse("baseline/udp-dut_rx/loss_pct", [f"R{i}" for i in range(10)], [0.0] * 7 + [0.3] * 3)
    assert t.verdict == "regression" and t.since == 7 and "+0.3 %" in t.line(), t.line()
    assert analyse("baseline/udp-dut_rx/loss_pct", [f"R{i}" for i in range(10)], [0.0] * 10).verdict == "steady"


@pytest.mark.parametrize("gate", [True, False])
def test_the_page_and_its_allure_result(tmp_path: Path, gate: bool) -> None:
    allure_dir = tmp_path / "allure-results"
    found = write_trend_page(history(), tmp_path, "host-dut", "quick", allure_dir, started=0.0, gate=gate)
    assert any(t.verdict == "regression" for t in found)
    text = (tmp_path / "trends.txt").read_text()
    assert text.startswith("REGRESSION baseline/tcp-dut_rx/mbps") and "5 of 6 case metrics steady" in text
    page = (tmp_path / "trends.html").read_text()
    assert page.count("<img") == len(CASES) and "1 regressed" in page
    (result,) = [json.loads(p.read_text()) for p in allure_dir.glob("*-result.json")]
    assert "REGRESSION baseline/tcp-dut_rx/mbps" in result["statusDetails"]["message"]
    # gated (--trend-gate on): a failed result, which fails the CI job's quality gate; else skipped, saying so
    assert result["status"] == ("failed" if gate else "skipped"), result["status"]
    skipped_says = "not gated (--trend-gate off; ./suite ci gates it unless --no-trend-gate)"
    assert gate or result["statusDetails"]["message"].startswith(skipped_says)


def test_a_case_judged_the_benchs_stays_out_of_the_history() -> None:
    """A generator- or tester-limited case's numbers are the bench's: kept, a bench's bad day would
    read as the DUT's step in its history (as a baseline leaves them out)."""
    from hil.report.history import history_samples, history_values
    from hil.report.summary import summary_rows
    from hil.results.recorder import make_record
    from hil.stats import summarize

    dut_s = make_record("baseline", "udp-dut_rx", "d", summarize([18.0, 18.1, 18.0]), 19.14)
    dut_s.verdict, dut_s.threshold = "below threshold", {"min_mbps": 18.5}
    bench_s = make_record("baseline", "udp-dut_tx", "d", summarize([12.0, 12.1, 12.0]), 19.14)
    bench_s.verdict, bench_s.threshold = "generator-limited", {"min_mbps": 16.8}
    records = [dut_s, bench_s]
    values = history_values(records, summary_rows(records))
    assert "baseline/udp-dut_rx/mbps" in values, "the DUT's own miss is its history"
    assert not [k for k in values if k.startswith("baseline/udp-dut_tx/")], values
    assert list(history_samples(records)) == ["baseline/udp-dut_rx/mbps"]


def _runs(key: str, per_run: list[list[float]]) -> list[RunNumbers]:
    return [
        RunNumbers(f"R{i}", f"2026-12-0{i + 1}", "d", "quick", {key: sum(v) / len(v)}, samples={key: v})
        for i, v in enumerate(per_run)
    ]


def test_one_run_fails_with_a_clear_step_and_not_with_a_smaller_one() -> None:
    """The first stepped run after two unchanged ones is a regression when its change is CLEAR_FACTOR
    x the relevant one (a 3 % step of a rate: 1 % relevant); a 1.5 % dip of one run waits for a
    second run on its level (MIN_GROUP)."""
    key = "baseline/udp-dut_tx/mbps"
    steady = [[18.01, 18.02, 18.01], [18.02, 18.01, 18.02]]
    stepped = trends(_runs(key, [*steady, [17.47, 17.48, 17.47]]), "d", "quick")
    assert stepped[0].verdict == "regression" and stepped[0].since == 2, stepped[0].line()
    dipped = trends(_runs(key, [*steady, [17.74, 17.75, 17.74]]), "d", "quick")
    assert dipped[0].verdict == "steady", dipped[0].line()
    twice = trends(_runs(key, [*steady, [17.74, 17.75, 17.74], [17.75, 17.74, 17.74]]), "d", "quick")
    assert twice[0].verdict == "regression" and twice[0].since == 2, twice[0].line()
