"""A real-board DUT kind with nothing attached: the run stops within seconds, before any
measurement, with one line naming the DUT, the flasher and the problem (no probe, no pack; for
an ESP32: no build, no serial port, no chip answering - the last one with the real esptool).
These need neither root nor a board: exactly the situation of a bench PC with the board
unplugged."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT
from tests.support.synthetic_idf_build import make_build

pytestmark = pytest.mark.slow

MAX_SECONDS = 20.0  # pytest's own start-up included; the flasher gives up in well under a second


def same70_bench(tmp_path: Path, flasher: str, target: str) -> Path:
    path = tmp_path / "same70.yaml"
    path.write_text(
        "duts:\n  - name: board-1\n    kind: same70\n"
        f"    flasher: {flasher}\n    probe: {{target: {target}, timeout_s: 30}}\n"
        "    console: {port: /dev/ttyACM0}\n    link: {shaping: false}\n    thresholds: same70-100m\n"
    )
    return path


def run_board_suite(tmp_path: Path, bench: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    argv = [sys.executable, "-m", "pytest", "tests/hil", "-m", "baseline", "--bench", str(bench),
            "--results-dir", str(tmp_path / "results"), f"--alluredir={tmp_path / 'allure'}"]  # fmt: skip
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False)
    return proc, time.monotonic() - start


@pytest.mark.parametrize(
    ("flasher", "target", "message"),
    [
        ("openocd", "atsame70q21b", "flasher openocd: no debug probe attached"),
        # a target pyocd knows without a pack, to reach its probe search
        ("pyocd", "cortex_m", "flasher pyocd: no debug probe attached"),
        ("pyocd", "atsame70q21b", "pyocd pack install atsame70q21b"),
    ],
)
def test_same70_without_probe_or_pack_stops_within_seconds_with_one_message(
    tmp_path: Path, flasher: str, target: str, message: str
) -> None:
    proc, elapsed = run_board_suite(tmp_path, same70_bench(tmp_path, flasher, target))
    out = proc.stdout + proc.stderr
    assert proc.returncode == ExitCode.BENCH_FAULT, out[-2000:]  # the bench's: a CI job may retry it
    assert elapsed < MAX_SECONDS, f"took {elapsed:.1f} s"
    lines = [line for line in out.splitlines() if message in line]
    assert len(lines) == 1 and "cannot flash DUT 'board-1'" in lines[0], out[-2000:]
    assert "Traceback" not in out and "passed" not in out and "failed" not in out.replace("failed (", "")
    print(f"{elapsed:.1f} s: {lines[0]}")


def esp32_bench(tmp_path: Path, project: Path, port: str) -> Path:
    path = tmp_path / "esp32.yaml"
    path.write_text(
        "duts:\n  - name: esp32-1\n    kind: esp32\n"
        f"    esp_idf: {{target: esp32, configs: [default], project_dir: {project}}}\n"
        f"    console: {{port: {port}}}\n    wifi: {{ssid: open-ap}}\n    link: {{shaping: false}}\n"
        "    thresholds: esp32-wifi\n"
    )
    return path


@pytest.fixture
def silent_port() -> Iterator[str]:
    """A serial port where nothing answers (a pseudo-terminal): a board that is not an ESP32, or
    one held in reset."""
    master, slave = os.openpty()
    yield os.ttyname(slave)
    os.close(master)
    os.close(slave)


@pytest.mark.parametrize("situation", ["no build", "no port", "no chip"])
def test_esp32_without_build_port_or_chip_stops_within_seconds_with_one_message(
    tmp_path: Path, silent_port: str, situation: str
) -> None:
    project = tmp_path / "esp32"
    project.mkdir()
    if situation != "no build":
        make_build(project, "build_esp32_default")
    port = "/dev/ttyUSB-not-there" if situation == "no port" else silent_port
    message = {
        "no build": f"no ESP-IDF build for target esp32 config 'default' in {project}",
        "no port": "serial port /dev/ttyUSB-not-there does not exist",
        "no chip": f"flasher esptool (build_esp32_default on {silent_port}): no ESP32 answered on",
    }[situation]
    proc, elapsed = run_board_suite(tmp_path, esp32_bench(tmp_path, project, port))
    out = proc.stdout + proc.stderr
    # no build: the bench file points at nothing (a person fixes it); no port, no chip: the bench's
    expected = ExitCode.USAGE_ERROR if situation == "no build" else ExitCode.BENCH_FAULT
    assert proc.returncode == expected, out[-2000:]
    assert elapsed < MAX_SECONDS, f"took {elapsed:.1f} s"
    lines = [line for line in out.splitlines() if message in line]
    assert len(lines) == 1 and "cannot flash DUT 'esp32-1'" in lines[0], out[-2000:]
    assert "Traceback" not in out and "passed" not in out
    print(f"{elapsed:.1f} s: {lines[0]}")
