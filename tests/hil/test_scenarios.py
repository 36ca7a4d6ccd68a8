"""Every case of every scenario family (hil.scenarios.contract: the families in
hil/scenarios/families/ register themselves) on the bench file's DUT, id `<scenario>/<case>` as
in the threshold profile, e.g. `length_udp/dut_rx-l500`; each family's marker selects its cases
(-m length). A case the bench cannot run is listed and skipped with the reason."""

from __future__ import annotations

import pytest

from hil.scenarios.contract import Case
from hil.session import HilContext

pytestmark = pytest.mark.hil


# pytest-embedded's log_metric: the case's numbers go to the metrics file (fixtures/report.py)
@pytest.mark.usefixtures("log_metric")
def test_scenario(hil: HilContext, scenario_case: Case) -> None:
    scenario_case.run(hil)
