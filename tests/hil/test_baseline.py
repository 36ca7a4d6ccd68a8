"""Baseline (seed 000, section 5.1.1; the four cases of ESP-IDF's own iperf test):
TCP and UDP, the DUT transmitting and receiving. UDP always runs at an explicit rate
(90 % of the link rate): iperf 2's 1 Mbit/s default produced the seed's 1.07 Mbit/s "UDP RX".
Every repetition is recorded before the median is checked against the threshold profile.
"""

from __future__ import annotations

import allure
import pytest

from hil.scenarios.sweep import Point, check, measure
from hil.session import HilContext
from hil.stats import summarize
from hil.theory import tcp_goodput_mbps, udp_goodput_mbps
from hil.traffic.roles import TrafficSpec

pytestmark = [pytest.mark.hil, pytest.mark.baseline]

SCENARIO = "baseline"
UDP_LEN = 1470
UDP_RATE_OF_LINK = 0.90
CASES = [("tcp", "dut_tx"), ("tcp", "dut_rx"), ("udp", "dut_tx"), ("udp", "dut_rx")]


@allure.feature("baseline")
@pytest.mark.parametrize(("proto", "direction"), CASES, ids=[f"{p}-{d}" for p, d in CASES])
def test_baseline(hil: HilContext, proto: str, direction: str) -> None:
    case = f"{proto}-{direction}"
    allure.dynamic.title(f"baseline {case}")
    allure.dynamic.story(case)
    hil.thresholds.limits(SCENARIO, case)  # a case without a threshold is an error, before any traffic
    rate = round(hil.link_mbit * UDP_RATE_OF_LINK, 3) if proto == "udp" else None
    spec = TrafficSpec(proto, direction, hil.duration_s, length=UDP_LEN if proto == "udp" else None, rate_mbps=rate)  # type: ignore[arg-type]
    theory = tcp_goodput_mbps(hil.link_mbit, 1460) if proto == "tcp" else udp_goodput_mbps(hil.link_mbit, UDP_LEN)
    allure.dynamic.parameter("duration_s", hil.duration_s)
    allure.dynamic.parameter("repetitions", hil.repeat)
    if rate:
        allure.dynamic.parameter("offered rate (Mbit/s)", rate)

    rec = measure(hil, SCENARIO, Point(case, spec, theory))  # every number recorded before any check
    summary = summarize(rec.values)
    loss = f", loss {rec.loss_pct:.3f} %" if rec.loss_pct is not None else ""
    allure.dynamic.title(
        f"baseline {case}: {summary.median:.2f} Mbit/s = {rec.efficiency_pct:.1f} % of {theory:.2f}{loss}"
    )

    lines = [
        f"runs (Mbit/s): {', '.join(f'{v:.3f}' for v in summary.values)}",
        summary.format("Mbit/s"),
        f"theoretical goodput: {theory:.2f} Mbit/s",
        f"efficiency: {rec.efficiency_pct:.2f} %",
    ]
    if proto == "udp":
        lines += [f"worst loss: {rec.loss_pct:.4f} %", f"worst jitter: {rec.jitter_ms:.3f} ms"]
    lines.append(f"threshold: {hil.thresholds.limits(SCENARIO, case).model_dump(exclude_none=True)}")
    with allure.step(f"median {summary.median:.2f} Mbit/s = {rec.efficiency_pct:.1f} % of theoretical {theory:.2f}"):
        allure.attach("\n".join(lines), name="summary", attachment_type=allure.attachment_type.TEXT)
    check(hil, SCENARIO, [rec])
