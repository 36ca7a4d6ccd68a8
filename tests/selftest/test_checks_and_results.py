import json

import pytest

from hil.checks import BELOW_THRESHOLD, Measurement, assert_within, trend_violations, violations
from hil.config.thresholds import Limits, Trend
from hil.results.recorder import Recorder, make_record, summary_table
from hil.stats import summarize

pytestmark = pytest.mark.selftest


def test_failure_message_names_measured_threshold_and_theory():
    m = Measurement("baseline", "tcp-dut_tx", median_mbps=80.0, theory_mbps=94.93)
    with pytest.raises(AssertionError) as exc:
        assert_within(m, Limits(min_mbps=93))
    msg = str(exc.value)
    assert msg.startswith(f"{BELOW_THRESHOLD}: baseline/tcp-dut_tx")
    assert "median 80.00 Mbit/s < threshold 93.00 Mbit/s" in msg and "theoretical 94.93 Mbit/s" in msg


def test_every_limit_kind():
    m = Measurement("s", "c", median_mbps=90, theory_mbps=95, loss_pct=1.0, latency_ms=3.0)
    assert violations(m, Limits(min_mbps=90, max_loss_pct=1.0, max_latency_ms=3.0, min_efficiency_pct=94)) == []
    found = violations(m, Limits(min_mbps=91, max_loss_pct=0.5, max_latency_ms=2.0, min_efficiency_pct=95))
    assert len(found) == 4
    assert violations(Measurement("s", "c", 90, 95), Limits(max_loss_pct=1)) == [
        "a loss threshold is set but the case measures no loss"
    ]


def test_an_upper_efficiency_limit_catches_more_than_the_construction_allows():
    limits = Limits(min_efficiency_pct=90, max_efficiency_pct=105)
    assert violations(Measurement("window_dut", "dut_rx-wnd2", 1.16, 1.16), limits) == []
    (found,) = violations(Measurement("window_dut", "dut_rx-wnd2", 2.5, 1.16), limits)
    assert found.startswith("efficiency 215.5 % > upper limit 105.0 %") and "2.50 Mbit/s" in found
    with pytest.raises(ValueError, match="greater than or equal to 100"):
        Limits(max_efficiency_pct=95)


def test_trend_accepts_a_rise_to_a_plateau_within_noise():
    trend = Trend(min_gain_pct=15, max_drop_pct=15)
    assert trend_violations([("wnd2", 95.2), ("default", 133.4), ("wnd6", 128.6)], trend) == []
    assert trend_violations([("a", 400), ("b", 700), ("c", 1300), ("d", 2000)], trend) == []


def test_trend_fails_without_gain_and_on_a_drop_below_the_best_before():
    trend = Trend(min_gain_pct=15, max_drop_pct=10)
    flat = trend_violations([("wnd2", 100.0), ("wnd4", 105.0)], trend)
    assert flat == ["best later step wnd4 105.00 Mbit/s gains 5.0 % over wnd2 100.00 Mbit/s < threshold 15.0 %"]
    dropped = trend_violations([("wnd2", 100.0), ("wnd4", 140.0), ("wnd8", 120.0)], trend)
    assert dropped == ["wnd8 120.00 Mbit/s falls 14.3 % below wnd4 140.00 Mbit/s > threshold 10.0 %"]
    assert trend_violations([("only", 50.0)], trend) == ["a trend needs at least two ladder steps, got 1"]


def test_recorder_appends_jsonl_and_perf_metrics_before_the_verdict(tmp_path):
    rec_dir, allure_dir = tmp_path / "r", tmp_path / "a"
    recorder = Recorder(rec_dir, allure_dir)
    rec = make_record("baseline", "udp-dut_rx", "d", summarize([89.0, 90.0, 91.0]), theory=95.7)
    rec.loss_pct = 0.1
    recorder.record(rec, 1.0, 2.0)
    lines = (rec_dir / "results.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert first["median"] == 90.0 and first["verdict"] == "recorded" and first["values"] == [89.0, 90.0, 91.0]
    recorder.set_verdict(rec, "passed")
    assert json.loads((rec_dir / "results.jsonl").read_text().splitlines()[-1])["verdict"] == "passed"
    perf = json.loads(next(allure_dir.glob("*-perf.json")).read_text())
    keys = {m["key"]: m for m in perf}
    assert keys["median_mbps"]["value"] == 90.0 and keys["loss_pct"]["better"] == "lower"
    assert {"run1_mbps", "run2_mbps", "run3_mbps", "efficiency_pct", "stdev_mbps"} <= keys.keys()
    table = summary_table(recorder.rows)
    assert "baseline/udp-dut_rx" in table[2] and "passed" in table[2]
