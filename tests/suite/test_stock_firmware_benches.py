"""The stock-firmware bench files (bench/esp32-iperf-example.yaml, bench/same70-zperf.yaml) on a PC
without the board: `pytest --collect-only` lists their matrices, a run lists the cases their
dialect cannot serve as skipped with the reason, and with the build in place but nothing attached
the run stops within seconds with one line naming the DUT and the problem."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT
from tests.support.synthetic_idf_build import make_build

pytestmark = pytest.mark.slow

MAX_SECONDS = 30.0  # pytest's start-up included; esptool gives up on a silent port in a few seconds


def bench_copy(tmp_path: Path, name: str, **dut_changes: object) -> Path:
    """The project's bench file with some of its DUT's keys changed (paths of this machine)."""
    data = yaml.safe_load((PROJECT_ROOT / "bench" / f"{name}.yaml").read_text())
    for key, value in dut_changes.items():
        section, _, field = key.partition("__")
        if field:
            data["duts"][0][section][field] = value
        else:
            data["duts"][0][section] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def pytest_run(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    argv = [sys.executable, "-m", "pytest", "tests/hil", "-p", "no:cacheprovider", "--results-dir",
            str(tmp_path / "results"), f"--alluredir={tmp_path / 'allure'}", *args]  # fmt: skip
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=180, check=False,
                          env={**os.environ, **(env or {})})  # fmt: skip
    return proc, time.monotonic() - start


@pytest.mark.parametrize("bench", ["esp32-iperf-example", "same70-zperf"])
def test_collect_only_lists_the_matrix_without_a_board(tmp_path: Path, bench: str) -> None:
    proc, _ = pytest_run(tmp_path, "--collect-only", "-q", "--profile", "quick", "--bench", f"bench/{bench}.yaml")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert any("baseline/tcp-dut_tx" in i for i in ids) and any("capacity/dut_rx-l1448" in i for i in ids)
    assert any("flood/pc_to_dut-64" in i for i in ids) and len(ids) > 40, proc.stdout[-2000:]


@pytest.fixture
def silent_port() -> Iterator[str]:
    """A serial port where nothing answers (a pseudo-terminal): the board unplugged from its UART."""
    master, slave = os.openpty()
    yield os.ttyname(slave)
    os.close(master)
    os.close(slave)


def one_line_stop(
    proc: subprocess.CompletedProcess[str],
    elapsed: float,
    dut: str,
    message: str,
    code: ExitCode = ExitCode.BENCH_FAULT,
) -> str:
    """One line naming the problem, within seconds, with the exit code saying whose it is (no
    board or probe: the bench's; a firmware path that points at nothing: a usage error)."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == code, out[-3000:]
    assert elapsed < MAX_SECONDS, f"took {elapsed:.1f} s"
    lines = [line for line in out.splitlines() if message in line]
    assert len(lines) == 1 and f"cannot flash DUT '{dut}'" in lines[0], out[-3000:]
    assert "Traceback" not in out and " passed" not in out
    return lines[0]


@pytest.mark.parametrize("situation", ["no port", "no chip"])
def test_esp32_example_without_a_board_stops_within_seconds(tmp_path: Path, silent_port: str, situation: str) -> None:
    example = tmp_path / "iperf"
    make_build(example, "build", variant="")  # the example's own `build`: no HIL_FW_VARIANT in it
    port = "/dev/ttyUSB-not-there" if situation == "no port" else silent_port
    bench = bench_copy(tmp_path, "esp32-iperf-example", esp_idf__project_dir=str(example), console__port=port)
    proc, elapsed = pytest_run(tmp_path, "-m", "baseline", "--profile", "quick", "--bench", str(bench),
                               env={"HIL_WIFI_PSK": "not-a-real-psk-1"})  # fmt: skip
    message = "serial port /dev/ttyUSB-not-there does not exist" if situation == "no port" else "pytest-embedded-idf"
    line = one_line_stop(proc, elapsed, "esp32-example", message)
    assert "not-a-real-psk-1" not in proc.stdout + proc.stderr
    print(f"{elapsed:.1f} s: {line}")


@pytest.mark.parametrize(
    ("flasher", "message"), [("openocd", "no debug probe attached"), ("pyocd", "pyocd pack install")]
)
def test_same70_zperf_without_a_board_stops_within_seconds(tmp_path: Path, flasher: str, message: str) -> None:
    elf = tmp_path / "zephyr.elf"  # an ELF header of a 32-bit little-endian ARM executable (e_machine 40)
    elf.write_bytes(b"\x7fELF\x01\x01\x01" + bytes(9) + struct.pack("<HH", 2, 40) + bytes(32))
    bench = bench_copy(tmp_path, "same70-zperf", firmware={"image": str(elf)}, flasher=flasher)
    proc, elapsed = pytest_run(tmp_path, "-m", "baseline", "--profile", "quick", "--bench", str(bench))
    print(f"{elapsed:.1f} s: {one_line_stop(proc, elapsed, 'same70-zperf', message)}")


def test_a_stock_bench_file_points_at_a_build_that_is_there(tmp_path: Path) -> None:
    """The bench file as shipped names the example's usual path: a PC without it gets one line
    naming the file and key, a usage error found before any bench comes up."""
    proc, elapsed = pytest_run(tmp_path, "-m", "baseline", "--profile", "quick", "--bench", "bench/same70-zperf.yaml")
    image = "/opt/zephyrproject/zephyr/build/zephyr/zephyr.elf"
    out = proc.stdout + proc.stderr
    assert proc.returncode == ExitCode.USAGE_ERROR, out[-3000:]
    assert elapsed < MAX_SECONDS, f"took {elapsed:.1f} s"
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines == [
        f"ERROR: bench/same70-zperf.yaml: DUT same70-zperf: firmware.image: firmware image {image} does not exist"
    ], out[-3000:]
