"""A sender that can be asked whole Mbit/s only (ESP-IDF's iperf example's `-b`): the offered rate
of a point is the next one up it can be asked, and is what the record compares with; a capacity
search whose floor that sender cannot show, however good the DUT, is not run, saying why."""

from __future__ import annotations

import pytest

from hil.config.thresholds import Limits
from hil.scenarios.families.capacity import _unreachable_floor
from hil.scenarios.families.sweeps import LENGTH, LOAD_UDP, Group, PointEnv

pytestmark = pytest.mark.selftest

WHOLE = PointEnv(20.0, 2.0, {"dut_tx": 1.0, "dut_rx": None})


def test_a_whole_mbit_sender_is_offered_the_next_whole_rate_and_the_record_says_so() -> None:
    load = LOAD_UDP.traffic(Group("udp", "dut_tx"), 90, WHOLE)
    assert load.spec.rate_mbps == 18.0 and load.theory_mbps == 18.0  # 90 % of 19.14 = 17.23: asked 18
    assert load.params == {"offered rate (Mbit/s)": 18.0, "sender's rate step (Mbit/s)": 1.0}
    exact = LOAD_UDP.traffic(Group("udp", "dut_rx"), 90, WHOLE)  # the PC's iperf: any rate
    assert (
        exact.spec.rate_mbps == pytest.approx(17.227, abs=0.001) and "sender's rate step (Mbit/s)" not in exact.params
    )
    short = LENGTH.traffic(Group("udp", "dut_tx"), 64, WHOLE)
    assert short.spec.rate_mbps == 9.0 and short.theory_mbps == pytest.approx(9.85, abs=0.01)  # 8.87 asked as 9
    assert WHOLE.offer(18.0, "dut_tx") == 18.0  # already a whole rate: unchanged


def test_a_capacity_floor_the_sender_cannot_show_is_not_run_naming_why() -> None:
    floor = Limits.model_validate({"min_efficiency_pct": 98})
    why = _unreachable_floor(1.0, 17.67, floor, "dut_tx")
    assert why is not None and "17 Mbit/s, is 96.2 % of it, below the case's floor of 98 %" in why
    assert _unreachable_floor(1.0, 95.64, floor, "dut_tx") is None  # 94 Mbit/s is 98.3 %: the search can show it
    assert _unreachable_floor(None, 17.67, floor, "dut_tx") is None  # any rate
    assert _unreachable_floor(1.0, 19.0, floor, "dut_tx") is not None  # 19 is the theory itself: 18 is the best below
