"""MSS (seed 000, 5.1.3): the DUT-side MSS through build configurations (536 / 1460). Seed 000
could not tell what -M did; every point here reports the MSS observed on the connection (the
PC kernel's send MSS, or its estimate of the received segments) next to the requested one, and
the theoretical goodput is computed for the observed MSS."""

from __future__ import annotations

import allure
import pytest

from fixtures.options import DUT_KEY
from hil.checks import criteria
from hil.console.dialects.capabilities import dialect_info
from hil.scenarios.families import mss_table
from hil.scenarios.sweep import Point, attach_text, check, confirm_miss, measure
from hil.session import HilContext
from hil.theory import tcp_goodput_mbps
from hil.traffic.roles import TrafficSpec

pytestmark = [pytest.mark.hil, pytest.mark.mss, pytest.mark.dut_endpoint, pytest.mark.dut_needs("builds")]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One case per DUT MSS build and direction, as its build system declares them
    (`mss_dut/dut_rx-mss536` ...)."""
    if "mss_step" in metafunc.fixturenames:
        dut = metafunc.config.stash[DUT_KEY]
        builds = dut.ladders()[1]
        if not builds:  # said in the report, not pytest's "empty parameter set"
            why = dialect_info(dut.console.dialect).not_applicable(frozenset({"builds"})) or (
                f"DUT kind {dut.kind!r} declares no TCP_MSS builds to flash"
            )
            metafunc.parametrize("mss_step", [pytest.param(None, marks=pytest.mark.skip(reason=why))], ids=["mss_dut"])
            return
        steps = [(c, m, d) for c, m in builds for d in ("dut_rx", "dut_tx")]
        metafunc.parametrize("mss_step", steps, ids=[f"mss_dut/{d}-{c}" for c, _, d in steps])


@pytest.mark.own_builds
def test_dut_mss_builds(hil: HilContext, mss_step: tuple[str, int, str]) -> None:
    scenario = "mss_dut"
    config, mss, direction = mss_step
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
    allure.dynamic.title(
        f"mss_dut/{case}: TCP_MSS {mss}, observed {rec.extra.get('observed_mss')}: {rec.median:.2f} Mbit/s = "
        f"{rec.efficiency_pct or 0:.1f} % of {rec.theory or 0:.2f}; {criteria(rec.metrics(), limits)}"
    )
    try:
        check(hil, scenario, [rec])
    except AssertionError as miss:
        confirm_miss(hil, scenario, miss, lambda: measure(hil, scenario, point))
