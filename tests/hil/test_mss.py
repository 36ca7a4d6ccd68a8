"""MSS sweep (seed 000, 5.1.3): the PC-side MSS (-M, seed 000's 160 ... 1360 series plus 1460)
in both directions, and the DUT-side MSS through build configurations (536 / 1460). Seed 000
could not tell what -M did; every point here reports the MSS observed on the connection (the
PC kernel's send MSS, or its estimate of the received segments) next to the requested one, and
the theoretical goodput is computed for the observed MSS."""

from __future__ import annotations

import allure
import pytest

from hil.results.recorder import CaseRecord
from hil.scenarios.charts import sweep_chart
from hil.scenarios.sweep import Point, attach_png, attach_text, check, measure
from hil.session import HilContext
from hil.theory import tcp_goodput_mbps
from hil.traffic.roles import TrafficSpec

pytestmark = [pytest.mark.hil, pytest.mark.mss]


def mss_table(records: list[CaseRecord]) -> str:
    lines = [f"{'requested':>9s} {'observed':>9s} {'median':>9s} {'theory':>8s} {'eff%':>6s}  case"]
    for r in records:
        obs = r.extra.get("observed_mss")
        eff = f"{r.efficiency_pct:6.1f}" if r.efficiency_pct else f"{'-':>6s}"
        lines.append(
            f"{r.extra.get('requested_mss')!s:>9s} {obs!s:>9s} {r.median:9.2f} {r.theory or 0:8.2f} {eff}  {r.case}"
        )
    return "\n".join(lines)


@pytest.mark.parametrize("direction", ["dut_rx", "dut_tx"])
def test_pc_mss_sweep(hil: HilContext, direction: str) -> None:
    allure.dynamic.title(f"MSS sweep, PC-side -M, {direction} (requested vs observed MSS)")
    scenario = "mss_pc"
    records = []
    for mss in hil.profile.pc_mss:
        spec = TrafficSpec("tcp", direction, hil.duration_s, pc_mss=mss, observe_mss=True)  # type: ignore[arg-type]
        theory = tcp_goodput_mbps(hil.link_mbit, min(mss, 1460))
        records.append(measure(hil, scenario, Point(f"{direction}-M{mss}", spec, theory, x=mss)))
    attach_text("MSS sweep: requested vs observed", mss_table(records))
    attach_png(
        "throughput vs MSS",
        sweep_chart(
            f"TCP {direction}: goodput vs PC-side MSS (-M)",
            "requested MSS (bytes)",
            {direction: [(r.extra["x"], r.median) for r in records]},
            theory=[(r.extra["x"], r.theory or 0.0) for r in records],
        ),
    )
    missing = [r.case for r in records if r.extra.get("observed_mss") is None]
    assert not missing, f"BENCH FAULT: the connection's MSS could not be observed for {', '.join(missing)}"
    check(hil, scenario, records)


@pytest.mark.own_builds
def test_dut_mss_builds(hil: HilContext) -> None:
    allure.dynamic.title("MSS, DUT TCP_MSS builds 536/1460, both directions")
    scenario = "mss_dut"
    records = []
    for config, mss in hil.dut.adapter.mss_configs:
        identity = hil.flash_config(config)
        assert int(identity.fields["tcp_mss"]) == mss, f"config {config} reports TCP_MSS {identity.fields['tcp_mss']}"
        for direction in ("dut_rx", "dut_tx"):
            spec = TrafficSpec("tcp", direction, hil.duration_s, observe_mss=True)  # type: ignore[arg-type]
            rec = measure(
                hil, scenario, Point(f"{direction}-{config}", spec, tcp_goodput_mbps(hil.link_mbit, mss), x=mss)
            )
            rec.extra["requested_mss"] = mss
            records.append(rec)
    attach_text("DUT MSS builds: configured vs observed", mss_table(records))
    check(hil, scenario, records)
