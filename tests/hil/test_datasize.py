"""Data-size transfers (thesis: 100 MB and 500 MB with iperf -n): a fixed number of bytes in
each direction; the profile scales the sizes."""

from __future__ import annotations

import allure
import pytest

from hil.scenarios.sweep import Point, attach_text, check, measure, table
from hil.session import HilContext
from hil.theory import tcp_goodput_mbps
from hil.tools.sizes import parse_iperf_size
from hil.traffic.roles import TrafficSpec

pytestmark = [pytest.mark.hil, pytest.mark.datasize]

IPERF2_HEADER_SLACK = 24


@pytest.mark.parametrize("direction", ["dut_rx", "dut_tx"])
def test_data_size_transfer(hil: HilContext, direction: str) -> None:
    allure.dynamic.title(f"data-size transfers (-n), TCP {direction}")
    scenario = "datasize"
    theory = tcp_goodput_mbps(hil.link_mbit, 1460)
    records = []
    for size in hil.profile.data_sizes:
        expected_s = parse_iperf_size(size) * 8 / (theory * 1e6)
        spec = TrafficSpec("tcp", direction, expected_s, amount=size)  # type: ignore[arg-type]
        rec = measure(hil, scenario, Point(f"{direction}-n{size}", spec, theory, x=parse_iperf_size(size)))
        records.append(rec)
        # iperf 2 does not count the first message's header word (up to 24 bytes) as data
        short = [b for b in rec.extra["bytes"] if b < parse_iperf_size(size) - IPERF2_HEADER_SLACK]
        assert not short, f"DUT fault: {direction} transferred {short} of {size} bytes"
    attach_text("data-size transfers", table(records, "bytes"))
    check(hil, scenario, records)
