"""Bidirectional TCP and UDP (thesis: iperf3 --bidir; 100 MB down 42.4 / up 76.8 Mbit/s): both
directions at once, numbers per direction. The firmware runs an iperf server and client
together; UDP offers 90 % of the theoretical goodput each way."""

from __future__ import annotations

import time

import allure
import pytest

from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.sweep import attach_text, check
from hil.session import HilContext
from hil.stats import summarize
from hil.theory import tcp_goodput_mbps, udp_goodput_mbps
from hil.traffic.endpoints import HostEndpoint
from hil.traffic.roles import BidirResult, run_bidir, run_bidir_hosts

pytestmark = [pytest.mark.hil, pytest.mark.bidir]

UDP_LEN = 1470


@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_bidirectional(hil: HilContext, proto: str) -> None:
    allure.dynamic.feature("bidirectional")
    allure.dynamic.story(f"bidir {proto.upper()}")
    title = f"bidir/{proto}: {proto.upper()} both directions at once"
    allure.dynamic.title(title)
    scenario = "bidir"
    theory = tcp_goodput_mbps(hil.link_mbit, 1460) if proto == "tcp" else udp_goodput_mbps(hil.link_mbit, UDP_LEN)
    rate = round(theory * 0.9, 3) if proto == "udp" else None
    start = time.time()
    runs: list[BidirResult] = []
    for i in range(1, hil.repeat + 1):
        with allure.step(f"run {i}: {proto} both directions for {hil.duration_s:g} s"):
            length = UDP_LEN if proto == "udp" else None
            if isinstance(hil.far_end, HostEndpoint):  # a DUT in the path: PC <-> peer, iperf 3 --bidir
                r = run_bidir_hosts(proto, hil.duration_s, rate, hil.pc_side, hil.far_end, length)  # type: ignore[arg-type]
            else:
                r = run_bidir(proto, hil.duration_s, rate, hil.pc_side, hil.dut_side, length)  # type: ignore[arg-type]
            for d in (r.dut_tx, r.dut_rx):
                for name, text in d.raw.items():
                    attach_text(f"run {i} {d.spec.direction}: {name}", text)
            runs.append(r)
    records: list[CaseRecord] = []
    for direction in ("dut_tx", "dut_rx"):
        results = [getattr(r, direction) for r in runs]
        rec = make_record(scenario, f"{proto}-{direction}", hil.dut.config.name,
                          summarize([x.receiver_mbps for x in results]), theory)  # fmt: skip
        if proto == "udp":
            rec.loss_pct = max(x.loss_pct or 0.0 for x in results)
            rec.generator_limited = any(x.generator_limited for x in results)
            rec.extra["offered_mbps"] = rate
            if any(x.pc_receive_drops for x in results):  # left out of the loss: the DUT delivered them
                rec.extra["pc_receive_drops"] = [x.pc_receive_drops for x in results]
        rec.extra["sender_mbps"] = [round(x.sender_mbps, 3) for x in results]
        rec.traffic_s = hil.duration_s * len(runs) if direction == "dut_tx" else 0.0  # both ran at once
        hil.recorder.record(rec, start, time.time())
        records.append(rec)
    attach_text(
        "per direction",
        "\n".join(f"{r.case}: median {r.median:.2f} Mbit/s ({r.efficiency_pct:.1f} % of {theory:.2f})" for r in records)
        + f"\nsum: {sum(r.median for r in records):.2f} Mbit/s",
    )
    check(hil, scenario, records, title=title)
