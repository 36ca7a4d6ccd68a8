import json

import pytest

from hil.checks import trend_violations, violations
from hil.config.thresholds import Limits, Trend
from hil.results.recorder import Recorder, make_record, summary_table
from hil.stats import summarize

pytestmark = pytest.mark.selftest


def test_failure_message_names_measured_threshold_and_theory():
    (msg,) = violations({"mbps": 80.0, "efficiency_pct": 84.3}, Limits(min_mbps=93), theory_mbps=94.93)
    assert msg == "median 80.00 Mbit/s < threshold 93.00 Mbit/s (theoretical 94.93 Mbit/s, measured 84.3 % of it)"


def test_every_limit_kind():
    m = {"mbps": 90.0, "efficiency_pct": 100 * 90 / 95, "loss_pct": 1.0, "latency_ms": 3.0}
    assert violations(m, Limits(min_mbps=90, max_loss_pct=1.0, max_latency_ms=3.0, min_efficiency_pct=94), 95) == []
    found = violations(m, Limits(min_mbps=91, max_loss_pct=0.5, max_latency_ms=2.0, min_efficiency_pct=95), 95)
    assert len(found) == 4
    assert violations({"mbps": 90.0}, Limits(max_loss_pct=1)) == [
        "a limit on loss_pct is set but the case measures no loss_pct"
    ]


def test_a_limit_the_bench_cannot_give_the_case_is_not_a_miss() -> None:
    """RFC 6349's TCP efficiency of a DUT sender whose stock console has no TCP counters (no
    capture either): the record says why, the title shows it not measured; any other missing
    metric is still a miss."""
    limits = Limits.model_validate({"min_tcp_efficiency_pct": 98, "max_ttr": 1.1})
    why = {"tcp_efficiency_pct": "the DUT's console reports no count of the TCP segments it sent and sent again"}
    assert violations({"mbps": 90.0, "ttr": 1.05}, limits, unmeasurable=why) == []
    missed = violations({"mbps": 90.0}, limits, unmeasurable=why)
    assert missed == ["a limit on ttr is set but the case measures no ttr"]


def test_a_figure_the_path_withheld_is_a_miss_with_its_reason() -> None:
    """A DUT that answered no probe under load gives no buffer delay: a limit on it fails, saying
    why, where a figure the bench cannot give is only "not measured"."""
    limits = Limits.model_validate({"max_buffer_delay_pct": 50})
    withheld = {"buffer_delay_pct": "none of 40 pings answered during the transfer"}
    assert violations({"mbps": 90.0}, limits, unmeasurable=withheld, withheld=withheld) == [
        "buffer_delay_pct not measured against its limit: none of 40 pings answered during the transfer"
    ]


def test_a_limit_on_any_recorded_metric_needs_no_code():
    """max_jitter_ms, max_late, min_<anything>: the checker knows metrics by name only."""
    limits = Limits.model_validate({"max_jitter_ms": 0.5, "max_late": 0, "min_received": 100})
    assert violations({"jitter_ms": 0.2, "late": 0.0, "received": 100.0}, limits) == []
    assert violations({"jitter_ms": 0.7, "late": 3.0, "received": 90.0}, limits) == [
        "jitter_ms 0.700 ms > threshold 0.500 ms",
        "late 3 > threshold 0",
        "received 90 < threshold 100",
    ]
    with pytest.raises(ValueError, match="colour: Extra inputs are not permitted"):
        Limits.model_validate({"colour": 1})
    with pytest.raises(ValueError, match="max_late: a limit must be a finite number"):
        Limits.model_validate({"max_late": "none"})


def test_record_metrics_by_name():
    rec = make_record("baseline", "udp-dut_tx", "d", summarize([89.0, 90.0, 91.0]), theory=95.7)
    rec.loss_pct, rec.jitter_ms = 0.1, 0.02
    m = rec.metrics()
    assert m["mbps"] == 90.0 and m["loss_pct"] == 0.1 and m["jitter_ms"] == 0.02 and m["sd_mbps"] == 1.0
    assert m["efficiency_pct"] == pytest.approx(94.04, abs=0.01)
    ping = make_record("latency", "pc_to_dut", "d", summarize([0.2, 0.3, 0.9]), None, unit="ms")
    ping.measured["p99_ms"] = 0.9
    assert ping.metrics()["latency_ms"] == 0.9 and "mbps" not in ping.metrics()


def test_an_upper_efficiency_limit_catches_more_than_the_construction_allows():
    limits = Limits(min_efficiency_pct=90, max_efficiency_pct=105)
    assert violations({"mbps": 1.16, "efficiency_pct": 100.0}, limits, 1.16) == []
    (found,) = violations({"mbps": 2.5, "efficiency_pct": 215.5}, limits, 1.16)
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
    keys = {m["key"]: m for m in perf}  # per case and metric: Allure must not average unrelated cases
    case = "baseline/udp-dut_rx"
    assert keys[f"{case}/mbps"]["value"] == 90.0 and keys[f"{case}/mbps"]["unit"] == "Mbit/s"
    assert keys[f"{case}/loss_pct"]["better"] == "lower" and keys[f"{case}/loss_pct"]["unit"] == "%"
    assert f"{case}/efficiency_pct" in keys and f"{case}/sd_mbps" not in keys  # the spread: in the summary
    assert sorted(m["value"] for m in perf if m["key"] == f"{case}/runs_mbps") == [89.0, 90.0, 91.0]
    table = summary_table(recorder.rows)
    assert table[0].startswith("throughput (Mbit/s)") and "baseline/udp-dut_rx" in table[2] and "passed" in table[2]


def test_summary_table_gives_each_row_its_unit():
    rows = [make_record("baseline", "tcp-dut_tx", "d", summarize([94.0]), 94.93)]
    ping = make_record("latency", "pc_to_dut", "d", summarize([0.25]), None, unit="ms")
    ping.measured["p99_ms"], ping.loss_pct = 0.31, 0.0
    stream = make_record("stress-stress", "s6-dut_rx", "d", summarize([0.5]), None, unit="% lost")
    stream.loss_pct = 0.5
    stream.measured.update(sent=1000.0, lost=5.0, late=0.0, outoforder=2.0)
    table = summary_table([*rows, ping, stream])
    text = "\n".join(table)
    assert "throughput (Mbit/s)" in text and "latency (ms)" in text and "streams (packets)" in text
    latency_row = next(line for line in table if line.startswith("latency/pc_to_dut"))
    assert "0.250" in latency_row and "0.310" in latency_row and "Mbit" not in latency_row
    stream_row = next(line for line in table if line.startswith("stress-stress/s6-dut_rx"))
    assert stream_row.split()[1:6] == ["1000", "5", "0.5000", "0", "2"]
