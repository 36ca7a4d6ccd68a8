"""Baseline (seed 000, section 5.1.1; the four cases of ESP-IDF's own iperf test):
TCP and UDP, the DUT transmitting and receiving. UDP always runs at an explicit rate
(90 % of the link rate): iperf 2's 1 Mbit/s default produced the seed's 1.07 Mbit/s "UDP RX".
Every repetition is recorded before the median is checked against the threshold profile.
"""

from __future__ import annotations

import time

import allure
import pytest

from hil.checks import GeneratorShortfall, Measurement, assert_within
from hil.results.recorder import make_record
from hil.session import HilContext
from hil.stats import summarize
from hil.theory import tcp_goodput_mbps, udp_goodput_mbps
from hil.traffic.roles import TrafficResult, TrafficSpec, run_traffic

pytestmark = [pytest.mark.hil, pytest.mark.baseline]

SCENARIO = "baseline"
UDP_LEN = 1470
UDP_RATE_OF_LINK = 0.90
CASES = [("tcp", "dut_tx"), ("tcp", "dut_rx"), ("udp", "dut_tx"), ("udp", "dut_rx")]


def _attach_run(i: int, r: TrafficResult) -> None:
    for name, text in r.raw.items():
        allure.attach(text or "(empty)", name=f"run {i}: {name}", attachment_type=allure.attachment_type.TEXT)


@allure.feature("baseline")
@pytest.mark.parametrize(("proto", "direction"), CASES, ids=[f"{p}-{d}" for p, d in CASES])
def test_baseline(hil: HilContext, proto: str, direction: str) -> None:
    case = f"{proto}-{direction}"
    allure.dynamic.title(f"baseline {case}")
    allure.dynamic.story(case)
    limits = hil.thresholds.limits(SCENARIO, case)  # a case without a threshold is an error
    rate = round(hil.link_mbit * UDP_RATE_OF_LINK, 3) if proto == "udp" else None
    spec = TrafficSpec(proto, direction, hil.duration_s, length=UDP_LEN if proto == "udp" else None, rate_mbps=rate)  # type: ignore[arg-type]
    theory = tcp_goodput_mbps(hil.link_mbit, 1460) if proto == "tcp" else udp_goodput_mbps(hil.link_mbit, UDP_LEN)
    allure.dynamic.parameter("duration_s", hil.duration_s)
    allure.dynamic.parameter("repetitions", hil.repeat)
    if rate:
        allure.dynamic.parameter("offered rate (Mbit/s)", rate)

    start = time.time()
    runs: list[TrafficResult] = []
    for i in range(1, hil.repeat + 1):
        with allure.step(f"run {i}/{hil.repeat}: {spec.case_id} for {spec.duration_s:g} s"):
            r = run_traffic(spec, hil.pc_side, hil.dut_side)
            _attach_run(i, r)
            runs.append(r)

    summary = summarize([r.receiver_mbps for r in runs])
    rec = make_record(SCENARIO, case, hil.dut.config.name, summary, theory)
    if proto == "udp":
        rec.loss_pct = max(r.loss_pct or 0.0 for r in runs)
        rec.jitter_ms = max(r.jitter_ms or 0.0 for r in runs)
        rec.generator_limited = any(r.generator_limited for r in runs)
        rec.extra["offered_mbps"] = rate
        rec.extra["sender_mbps"] = [round(r.sender_mbps, 3) for r in runs]
        if any(r.pc_receive_drops for r in runs):  # left out of the loss: the DUT delivered them
            rec.extra["pc_receive_drops"] = [r.pc_receive_drops for r in runs]
    rec.threshold = {k: v for k, v in limits.model_dump().items() if v is not None}
    hil.recorder.record(rec, start, time.time())  # every number is recorded before any check
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
    lines.append(f"threshold: {rec.threshold}")
    with allure.step(f"median {summary.median:.2f} Mbit/s = {rec.efficiency_pct:.1f} % of theoretical {theory:.2f}"):
        allure.attach("\n".join(lines), name="summary", attachment_type=allure.attachment_type.TEXT)
    if rec.generator_limited:
        hil.recorder.set_verdict(rec, "generator-limited")  # says nothing about the DUT
        raise GeneratorShortfall(
            f"{case}: offered {rate} Mbit/s, sent {rec.extra['sender_mbps']}: the DUT's numbers are not comparable"
        )
    m = Measurement(SCENARIO, case, summary.median, theory, loss_pct=rec.loss_pct)
    try:
        assert_within(m, limits)
    except AssertionError:
        hil.recorder.set_verdict(rec, "below threshold")
        raise
    hil.recorder.set_verdict(rec, "passed")
