"""MSS (seed 000, 5.1.3): the DUT-side MSS through build configurations (536 / 1460). Seed 000
could not tell what -M did; every point here reports the MSS observed on the connection (the
PC kernel's send MSS, or its estimate of the received segments) next to the requested one, and
the theoretical goodput is computed for the observed MSS."""

from __future__ import annotations

from typing import TYPE_CHECKING

import allure

from hil.checks import criteria
from hil.scenarios.contract import BUILDS, BenchFacts, Case, no_builds_case, register
from hil.scenarios.families.sweeps import mss_table
from hil.scenarios.metrics import CONFIG, DIRECTION, IPERF3, THROUGHPUT, ScenarioShape
from hil.scenarios.sweep import Point, attach_text, check, confirm_miss, measure
from hil.theory import tcp_goodput_mbps
from hil.traffic.roles import TrafficSpec

if TYPE_CHECKING:
    from hil.session import HilContext


@register
class DutMssBuilds:
    name = "MSS, DUT TCP_MSS builds"
    marker = "mss"
    marker_doc = "MSS sweeps (PC -M, DUT build configs), observed MSS"
    shapes = (ScenarioShape("mss_dut", rf"{DIRECTION}-{CONFIG}", THROUGHPUT | IPERF3, "dut_rx-mss536", trend=True),)

    def cases(self, bench: BenchFacts) -> list[Case]:
        """One case per DUT MSS build and direction, as its build system declares them
        (`mss_dut/dut_rx-mss536` ...); none declared: one case saying so."""
        if not bench.mss_builds:
            return [no_builds_case(self, "mss_dut", bench, "TCP_MSS")]
        return [
            Case(self, f"mss_dut/{d}-{c}", (c, m, d), needs=BUILDS, topology="endpoint", own_builds=True)
            for c, m in bench.mss_builds
            for d in ("dut_rx", "dut_tx")
        ]

    def run(self, hil: HilContext, case: Case) -> None:
        dut_mss_build(hil, case.point)  # type: ignore[arg-type]


def dut_mss_build(hil: HilContext, step: tuple[str, int, str]) -> None:
    scenario = "mss_dut"
    config, mss, direction = step
    case = f"{direction}-{config}"
    limits = hil.thresholds.limits(scenario, case)
    allure.dynamic.feature("MSS, DUT TCP_MSS builds")
    allure.dynamic.story(f"mss_dut {direction}")
    if hil.dut.adapter.current_config != config:  # both directions of a build on one flash
        hil.flash_config(config)
    reported = hil.dut.identity.get_int("tcp_mss") if hil.dut.identity is not None else None
    assert reported == mss, f"config {config} reports TCP_MSS {reported}, its build declares {mss}"
    spec = TrafficSpec("tcp", direction, hil.duration_s, observe_mss=True)  # type: ignore[arg-type]
    point = Point(case, spec, tcp_goodput_mbps(hil.link_mbit, mss), x=mss)
    rec = measure(hil, scenario, point)
    rec.extra["requested_mss"] = mss
    attach_text("DUT MSS build: configured vs observed", mss_table([rec]))
    wire = rec.extra.get("wire_mss")
    syns = (
        f", SYN MSS PC {wire['syn_mss_pc']} / DUT {wire['syn_mss_far']} on the wire" if isinstance(wire, dict) else ""
    )
    allure.dynamic.title(
        f"mss_dut/{case}: TCP_MSS {mss}, observed {rec.extra.get('observed_mss')}{syns}: {rec.median:.2f} Mbit/s = "
        f"{rec.efficiency_pct or 0:.1f} % of {rec.theory or 0:.2f}; {criteria(rec.metrics(), limits)}"
    )
    try:
        check(hil, scenario, [rec])
    except AssertionError as miss:
        confirm_miss(hil, scenario, miss, lambda: measure(hil, scenario, point))
