"""A sender that can be asked whole Mbit/s only (ESP-IDF's iperf example's `-b`): the offered rate
of a point is the next one up it can be asked, and is what the record compares with; a capacity
search, which asks rates between whole ones, is not run with such a sender, saying why."""

from __future__ import annotations

import pytest

from hil.scenarios.families.capacity import _stepped_sender
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


def test_a_capacity_search_is_not_run_with_a_sender_that_takes_whole_rates_only() -> None:
    """The search asks rates between whole Mbit/s: such a sender would send the nearest whole one,
    and the rate found (e.g. 19.13 at a 19.13-Mbit/s theory) would be one it never sent."""
    why = _stepped_sender(1.0, 19.13, "dut_tx")
    assert why is not None and "the rate it found would not be one it sent" in why and "5.2 %" in why
    assert _stepped_sender(None, 19.13, "dut_tx") is None  # any rate: the search runs
