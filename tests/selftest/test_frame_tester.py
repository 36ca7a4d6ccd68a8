"""The frame tester's figures as the RFC 2544 family reads them (hil.traffic.frame_tester), from
the JSON its two roles print (tester/frametester.c), and the family's command-line axes."""

from __future__ import annotations

import pytest

from hil.scenarios.families.rfc2544 import FRAMES_AXIS, SLOW_AXIS, TESTS_AXIS
from hil.traffic.frame_tester import RFC2544_FRAME_SIZES, FrameTrial, Phase, frame_mbps, line_rate_fps

pytestmark = pytest.mark.selftest


def _trial(sent: int, received: int, achieved: float, offered: float = 20_000.0, stalled_ns: int = 0) -> FrameTrial:
    sender = {"sent": sent, "repeat": 1, "elapsed_s": (sent - 1) / achieved, "achieved_fps": achieved,
              "resyncs": 3, "stalled_ns": stalled_ns,
              "gaps": {"n": sent - 1, "even_ns": 1e9 / offered, "p5_ns": 49_900, "median_ns": 50_000,
                       "p95_ns": 50_100, "max_ns": 400_000, "clumped": 10}}  # fmt: skip
    receiver = {"received": received, "lost_runs": [[5, 7], [100, 100]], "latency_ns": {"p50": 2_500, "p99": 9_100},
                "longest_gap": {"ns": 200_000_000, "after_seq": 9, "next_seq": 4010}}  # fmt: skip
    return FrameTrial(64, (Phase(offered, sent),), sender, receiver)


def test_rfc2544s_table_of_theoretical_frame_rates() -> None:
    """RFC 2544's appendix: 148,810 frames/s at 64 B ... 8,127 at 1518 B on 100 Mbit/s."""
    rates = {size: round(line_rate_fps(100.0, size)) for size in RFC2544_FRAME_SIZES}
    assert rates == {64: 148810, 128: 84459, 256: 45290, 512: 23496, 1024: 11973, 1280: 9615, 1518: 8127}
    assert frame_mbps(148_810, 64) == pytest.approx(76.19, abs=0.01)


def test_a_trial_says_what_was_lost_and_how_evenly_it_was_sent() -> None:
    t = _trial(30_000, 29_996, 19_990.0, stalled_ns=3_000_000)
    assert t.lost == 4 and t.loss_ratio == pytest.approx(4 / 30_000)
    assert not t.generator_limited
    assert t.lost_runs == [(5, 7), (100, 100)]
    assert t.stalled_pct == pytest.approx(100 * 0.003 / t.elapsed_s)
    sp = t.spacing_fields()
    assert (
        sp["even_gap_us"] == 50.0
        and sp["median_gap_us"] == 50.0
        and sp["clumped_pct"] == pytest.approx(0.033, abs=1e-3)
    )
    assert t.latency_us["p99"] == 9.1


def test_a_tester_below_the_generator_tolerance_is_short() -> None:
    assert _trial(30_000, 30_000, 19_300.0).generator_limited  # 96.5 % of 20,000
    assert not _trial(30_000, 30_000, 19_500.0).generator_limited  # 97.5 %


@pytest.mark.parametrize(
    ("axis", "text", "message"),
    [
        (FRAMES_AXIS, "63", r"--frame-sizes values must lie in 64..1518"),
        (FRAMES_AXIS, "64,1519", r"--frame-sizes values must lie in 64..1518"),
        (FRAMES_AXIS, ",", "--frame-sizes takes comma-separated integers"),
        (TESTS_AXIS, "latency,bogus", "bogus: the tests are"),
        (SLOW_AXIS, "-5", r"--tester-slow-ns values must lie in 0..10000000"),
        (SLOW_AXIS, "5,6", "--tester-slow-ns takes one value"),
    ],
)
def test_bad_rfc2544_options_name_the_problem(axis, text: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        axis.parse(text)


def test_every_test_is_set_from_the_throughput() -> None:
    assert TESTS_AXIS.parse("b2b") == ("throughput", "b2b")
    assert FRAMES_AXIS.parse("64, 1518") == (64, 1518)


def test_a_trial_captured_at_the_devices_input_takes_its_spacing_from_there() -> None:
    t = _trial(30_000, 29_996, 19_990.0)
    t.tap = {"expected": 30_000, "unique": 29_998, "missing": 2, "capture_dropped": 0,
             "gaps": {"n": 29_990, "even_ns": 50_000.0, "p5_ns": 20_000, "median_ns": 49_000, "p95_ns": 99_000,
                      "max_ns": 900_000, "clumped": 2_999}}  # fmt: skip
    t.tap_name = "DUT's port p0"
    sp = t.spacing_fields()
    assert sp["source"] == "capture at the DUT's port p0" and sp["median_gap_us"] == 49.0
    assert sp["clumped_pct"] == pytest.approx(10.0, abs=0.01) and sp["missing_at_input"] == 2
    # the capture fell behind: which frames never reached the port is no longer known
    t.tap["capture_dropped"] = 5
    assert t.missing_at_input is None and t.spacing_fields()["missing_at_input"] is None
    t.tap = None  # no capture: the sender's own gaps, and it says so
    assert t.spacing_fields()["source"] == "the tester's send times" and t.missing_at_input is None
