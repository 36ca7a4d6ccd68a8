"""The DUT ladders come from the firmware's build system (firmware/CMakePresets.json), not from
a copy in the adapters."""

import json

import pytest

from hil.dut.presets import ladders
from hil.errors import BenchError

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
