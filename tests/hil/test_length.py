"""Packet-length sweep (thesis tables 8 and 10): 64/100/500/1448-byte writes (TCP) and
datagrams (UDP) in each direction, with a throughput-against-length chart. UDP is offered at
90 % of the theoretical goodput for its length."""

from __future__ import annotations

import allure
import pytest

from hil.scenarios.charts import sweep_chart
from hil.scenarios.sweep import Point, attach_png, attach_text, check, measure, table
from hil.session import HilContext
from hil.theory import tcp_goodput_mbps, udp_goodput_mbps
from hil.traffic.roles import TrafficSpec

pytestmark = [pytest.mark.hil, pytest.mark.length]

UDP_OFFER = 0.90


@pytest.mark.parametrize("direction", ["dut_rx", "dut_tx"])
@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_length_sweep(hil: HilContext, proto: str, direction: str) -> None:
    allure.dynamic.title(f"packet-length sweep, {proto.upper()} {direction}")
    scenario = f"length_{proto}"
    records = []
    for length in hil.profile.lengths:
        if proto == "tcp":
            theory = tcp_goodput_mbps(hil.link_mbit, 1460)  # writes of any size fill full segments
            spec = TrafficSpec("tcp", direction, hil.duration_s, length=length)  # type: ignore[arg-type]
        else:
            theory = udp_goodput_mbps(hil.link_mbit, length)
            rate = round(theory * UDP_OFFER, 3)
            spec = TrafficSpec("udp", direction, hil.duration_s, length=length, rate_mbps=rate)  # type: ignore[arg-type]
        records.append(measure(hil, scenario, Point(f"{direction}-l{length}", spec, theory, x=length)))
    attach_text("length sweep", table(records, "length (B)"))
    attach_png(
        "throughput vs length",
        sweep_chart(
            f"{proto.upper()} {direction}: goodput vs {'write' if proto == 'tcp' else 'datagram'} length",
            "length (bytes)",
            {direction: [(r.extra["x"], r.median) for r in records]},
            theory=[(r.extra["x"], r.theory or 0.0) for r in records],
        ),
    )
    check(hil, scenario, records)
