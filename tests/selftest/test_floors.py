"""Every throughput floor of the bench PC's threshold files at 90 % or more of its case's expected
value, or with its physics (hil.scenarios.floors): a floor lowered to what a noisy host reaches lets
a slower DUT pass."""

from __future__ import annotations

import pytest

from hil.config.thresholds import ThresholdProfile
from hil.scenarios.floors import floors, main

pytestmark = pytest.mark.selftest


def test_no_floor_of_the_bench_pc_below_90_percent_without_its_physics(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "0 floor(s) below 90 %" in out and "physics: each direction's ACKs wait" in out


def _profile(**case: object) -> ThresholdProfile:
    return ThresholdProfile.model_validate({"profile": "t", "link_mbit": 20, "scenarios": {"baseline": case}})


def test_a_low_floor_is_listed_and_needs_its_physics() -> None:
    low, _ = floors(_profile(**{"tcp-dut_tx": {"min_efficiency_pct": 75}}), "t")
    assert [(f.key, f.physics) for f in low] == [("baseline/tcp-dut_tx", None)]
    # UDP offered 90 % of the link: 85 % of the theory is 90.4 % of what a DUT without fault delivers
    ok, _ = floors(_profile(**{"udp-dut_rx": {"min_efficiency_pct": 85, "max_loss_pct": 0.1}}), "t")
    assert ok == []
    why = "a window of 2 segments per 20-ms round trip: the construction, not the host"
    given, _ = floors(_profile(**{"tcp-dut_rx": {"min_efficiency_pct": 50, "physics": why}}), "t")
    assert given[0].physics == why and not given[0].impossible


def test_a_floor_no_dut_can_meet_is_listed() -> None:
    found, _ = floors(_profile(**{"tcp-dut_tx": {"min_mbps": 80}}), "t")  # 80 Mbit/s on a 20 Mbit/s link
    assert found and found[0].impossible and "NO DUT CAN MEET IT" in found[0].line()
