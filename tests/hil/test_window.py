"""TCP window sweep (seed 000, 5.1.2; seed 001): the PC-side socket buffer (-w) with the DUT
as server and as client on the shaped link, and the DUT-side window through firmware build
configurations (TCP_WND = TCP_SND_BUF = k x MSS, one build directory per config) on the
unshaped link, where PC->DUT throughput must rise with the DUT's receive window (the profile's `trends:`
entry says how much, and how far a step may fall back within noise on a plateau)."""

from __future__ import annotations

import allure
import pytest

from fixtures.bench import HilContext
from hil.checks import BELOW_THRESHOLD, trend_violations
from hil.parsing import parse_iperf_size
from hil.results.recorder import CaseRecord
from hil.scenarios.charts import sweep_chart
from hil.scenarios.sweep import Point, attach_png, attach_text, check, measure, table
from hil.theory import tcp_goodput_mbps
from hil.traffic.roles import TrafficSpec

pytestmark = [pytest.mark.hil, pytest.mark.window]


@pytest.mark.parametrize("direction", ["dut_rx", "dut_tx"])
def test_pc_window_sweep(hil: HilContext, direction: str) -> None:
    allure.dynamic.title(f"TCP window sweep, PC-side -w, {direction}")
    scenario = "window_pc"
    theory = tcp_goodput_mbps(hil.link_mbit, 1460)
    records = []
    for w in hil.profile.pc_windows:
        spec = TrafficSpec("tcp", direction, hil.duration_s, pc_window=w)  # type: ignore[arg-type]
        records.append(measure(hil, scenario, Point(f"{direction}-w{w}", spec, theory, x=parse_iperf_size(w))))
    attach_text("window sweep", table(records, "window (B)"))
    attach_png(
        "throughput vs PC window",
        sweep_chart(
            f"TCP {direction}: goodput vs PC-side window (-w)",
            "PC socket buffer (bytes)",
            {direction: [(r.extra["x"], r.median) for r in records]},
            theory=[(r.extra["x"], theory) for r in records],
            logx=True,
        ),
    )
    check(hil, scenario, records)


@pytest.mark.own_builds
def test_dut_window_ladder(hil: HilContext) -> None:
    allure.dynamic.title("TCP window ladder, DUT TCP_WND builds, PC->DUT, unshaped link")
    scenario = "window_dut"
    records = []
    with hil.unshaped_link():
        for config, k in hil.dut.adapter.window_ladder:
            identity = hil.flash_config(config)
            wnd = int(identity.fields["tcp_wnd"])
            spec = TrafficSpec("tcp", "dut_rx", hil.duration_s)
            rec = measure(hil, scenario, Point(f"dut_rx-{config}", spec, None, x=wnd))
            rec.extra["tcp_wnd_segments"] = k
            records.append(rec)
    attach_text("DUT window ladder (unshaped link)", table(records, "TCP_WND (B)"))
    attach_png(
        "throughput vs DUT window",
        sweep_chart(
            "TCP PC->DUT on the unshaped link: goodput vs the DUT's TCP_WND",
            "DUT TCP_WND (bytes)",
            {"PC->DUT": [(r.extra["x"], r.median) for r in records]},
            logx=True,
        ),
    )
    found = _trend(hil, scenario, records)  # evaluated and attached before any limit can fail the test
    check(hil, scenario, records)
    assert not found, f"{BELOW_THRESHOLD}: {scenario}: PC->DUT throughput does not rise with the DUT's TCP_WND: " + (
        "; ".join(found)
    )


def _trend(hil: HilContext, scenario: str, records: list[CaseRecord]) -> list[str]:
    """The ladder's trend violations against the profile's `trends:` entry, attached to the report."""
    if len(records) < 2:
        kind = hil.dut.config.kind
        attach_text("trend", f"not checked: the {kind} adapter's ladder has one build ({records[0].case})")
        return []
    trend = hil.thresholds.trend(scenario)
    steps = " -> ".join(f"{r.extra['x']:.0f} B: {r.median:.1f}" for r in records)
    found = trend_violations([(r.case, r.median) for r in records], trend)
    attach_text("trend", f"{steps} Mbit/s\nlimits: {trend.model_dump()}\n" + ("\n".join(found) or "passed"))
    return found
