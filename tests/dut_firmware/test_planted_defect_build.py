"""The planted defect (firmware/host/src/planted_defect.c) is in the planted builds only (presets
host-planted and host-bridge-planted): the robustness scenarios' self-test needs a build with a
defect reachable from the wire, at an endpoint and in the path, and no other build may carry it.
Reads the symbols of the executables tools/build-host.sh produced."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from hil.paths import host_firmware

pytestmark = pytest.mark.selftest

SYMBOL = "fw_planted_defect_inspect"
PLANTED = ("planted", "bridge-planted")
CLEAN = ("default", "asan", "bridge", "bridge-asan")


def defined_symbols(config: str) -> set[str]:
    exe = host_firmware(config)
    if not exe.is_file():
        pytest.fail(f"{exe} not built (firmware/tools/build-host.sh host-{config})")
    out = subprocess.run(["nm", "--defined-only", str(exe)], capture_output=True, text=True, check=True).stdout
    return {parts[-1] for line in out.splitlines() if len(parts := line.split()) >= 3}


@pytest.fixture(scope="module", autouse=True)
def _nm() -> None:
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed")


@pytest.mark.parametrize("config", PLANTED)
def test_the_planted_builds_have_the_defect(config: str) -> None:
    assert SYMBOL in defined_symbols(config)


@pytest.mark.parametrize("config", CLEAN)
def test_no_other_build_has_it(config: str) -> None:
    assert SYMBOL not in defined_symbols(config), f"host-{config} carries the planted defect"
