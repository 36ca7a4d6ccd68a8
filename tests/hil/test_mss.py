"""MSS (seed 000, 5.1.3): the DUT-side MSS through build configurations (536 / 1460). Seed 000
could not tell what -M did; every point here reports the MSS observed on the connection (the
PC kernel's send MSS, or its estimate of the received segments) next to the requested one, and
the theoretical goodput is computed for the observed MSS."""

from __future__ import annotations

import allure
import pytest

from hil.scenarios.families import mss_table
from hil.scenarios.sweep import Point, attach_text, check, measure
from hil.session import HilContext
from hil.theory import tcp_goodput_mbps
from hil.traffic.roles import TrafficSpec

pytestmark = [pytest.mark.hil, pytest.mark.mss]


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
