"""The DUT ladders come from the firmware's build system (firmware/CMakePresets.json), not from
a copy in the adapters."""

import json

import pytest

from hil.dut.presets import builds, ladders
from hil.errors import BenchError
from hil.scenarios.families.stack_study import STUDIES

pytestmark = pytest.mark.selftest


def test_ladders_of_the_project_presets() -> None:
    assert ladders("host-") == (
        (("wnd2", 2), ("wnd4", 4), ("default", 8), ("wnd16", 16)),
        (("mss536", 536), ("default", 1460)),
    )
    assert ladders("mps2-an500-")[0] == (("wnd2", 2), ("default", 4), ("wnd6", 6))  # MSS inherited from board-base
    assert ladders("same70-xplained-") == ((("default", 8),), (("default", 1460),))


def test_a_prefix_without_a_default_build_is_one_error(tmp_path) -> None:
    presets = tmp_path / "CMakePresets.json"
    presets.write_text(json.dumps({"configurePresets": [{"name": "x-other", "cacheVariables": {}}]}))
    with pytest.raises(BenchError, match="no firmware preset x-default"):
        ladders("x-", presets)


def test_the_planted_build_is_in_no_study_or_ladder() -> None:
    """host-planted (the robustness scenarios' self-test) is a build the kind lists, never a step."""
    settings = {config: dict(values) for config, values in builds("host-")}
    assert settings["planted"]["FW_PLANTED_DEFECT"] == "ON"
    assert all("planted" not in study.steps(settings) for study in STUDIES)
    assert all(config != "planted" for ladder in ladders("host-") for config, _ in ladder)
