"""Every point of every sweep family (hil.scenarios.families: baseline, PC window, PC MSS,
packet length, data size) as its own case, id `<scenario>/<case>` as in the threshold profile,
e.g. `length_udp/dut_rx-l500`. The points come from the run profile and its command-line
overrides; each family's marker selects its points (-m length)."""

from __future__ import annotations

import pytest

from hil.scenarios.families import SweepPoint
from hil.scenarios.run_point import run_point
from hil.session import HilContext

pytestmark = pytest.mark.hil


def test_sweep_point(hil: HilContext, sweep_point: SweepPoint) -> None:
    run_point(hil, sweep_point)
