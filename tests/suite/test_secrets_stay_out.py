"""A Wi-Fi PSK in the environment never reaches what a run leaves behind: a virtual-bench run on
bench/virtual-wifi.yaml, where the DUT is a Wi-Fi station (the ESP32 port's `wifi` command next
to a simulated AP) that the suite joins with the PSK before every test, writes results, logs,
Allure results and the HTML report; a search of all of them, and of pytest's own output, finds
neither the PSK nor its hex form (the form the console carries). The run must have used the PSK:
every result records the association."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from hil.doctor.board_checks import baked_into
from hil.paths import PROJECT_ROOT

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

PSK_ENV = "HIL_WIFI_PSK"
WIFI_BENCH = PROJECT_ROOT / "bench" / "virtual-wifi.yaml"


def files_holding(root: Path, needles: tuple[str, ...]) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes().decode(errors="replace").lower()
            if any(n in data for n in needles):
                found.append(str(path.relative_to(root)))
    return found


def test_psk_found_nowhere_after_a_run(tmp_path: Path) -> None:
    psk = "Psk-" + secrets.token_urlsafe(12)
    needles = (psk.lower(), psk.encode().hex())
    results = tmp_path / "results"
    env = {**os.environ, PSK_ENV: psk}
    # traffic with functional limits only (ping, flood ping): the run is about the PSK, not speed
    argv = [sys.executable, "-m", "pytest", "tests/hil", "-m", "latency",
            "--bench", str(WIFI_BENCH), "--profile", "quick", "--repeat", "1",
            "--results-dir", str(results), f"--alluredir={results / 'allure-results'}",
            "--log-level=DEBUG", "-rA", "-v"]  # fmt: skip
    run = subprocess.run(argv, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-3000:]
    measured = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
    measured = [m for m in measured if "values" in m]
    assert len(measured) >= 2 and all(m["extra"]["link"]["wifi_rssi_dbm"] == -47 for m in measured), measured
    generate = ["report-generator/generate.sh", str(results)]
    report = subprocess.run(generate, cwd=PROJECT_ROOT, env=env, capture_output=True,
                            text=True, timeout=300, check=False)  # fmt: skip
    assert report.returncode == 0, report.stdout + report.stderr
    assert (results / "report" / "index.html").is_file()
    searched = sum(1 for p in results.rglob("*") if p.is_file())
    assert searched > 10, f"only {searched} files written: the search would prove nothing"
    assert files_holding(results, needles) == []
    planted = results / "dut" / "planted.log"  # the search finds a PSK where there is one
    planted.write_text(f"wifi connect 6170 {psk.encode().hex()} 10.77.0.2 24\n")
    assert files_holding(results, needles) == ["dut/planted.log"]
    assert not any(n in (output + report.stdout + report.stderr).lower() for n in needles)
    print(f"searched {searched} files (results, logs, Allure results, HTML report) and pytest's output: no PSK")


def test_unset_psk_variable_stops_the_run_with_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != PSK_ENV}
    argv = [sys.executable, "-m", "pytest", "tests/hil", "-m", "latency", "--bench", str(WIFI_BENCH),
            "--results-dir", str(tmp_path / "results"), f"--alluredir={tmp_path / 'allure'}"]  # fmt: skip
    run = subprocess.run(argv, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    out = run.stdout + run.stderr
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, out[-2000:]
    expected = f"Wi-Fi 'hil-sim-ap': the PSK's environment variable {PSK_ENV} is not set"
    assert expected in out and "Traceback" not in out


# what a build reads from its environment: CMake's $ENV{...}, a script's getenv or $VAR, Kconfig's env
BUILD_FILES = ("CMakeLists.txt", "*.cmake", "Kconfig*", "*.sh", "CMakePresets.json", "idf_component.yml")


def test_no_firmware_build_reads_the_psk() -> None:
    """The PSK's variable (the bench files' psk_env, and any Wi-Fi credential variable) is read by
    no build file of the firmware: an image can only hold it if a build is given it."""
    names = {PSK_ENV, "HIL_WIFI_SSID", "WIFI_PASSWORD", "WIFI_PSK"}
    for bench in (PROJECT_ROOT / "bench").glob("*.yaml"):
        names |= set(re.findall(r"psk_env:\s*([A-Za-z_][A-Za-z0-9_]*)", bench.read_text()))
    readers = [
        f"{path.relative_to(PROJECT_ROOT)}: {name}"
        for pattern in BUILD_FILES
        for path in (PROJECT_ROOT / "firmware").rglob(pattern)
        if "build" not in path.relative_to(PROJECT_ROOT / "firmware").parts[:1] and ".deps" not in path.parts
        for name in names
        if name in path.read_text(errors="replace")
    ]
    assert readers == []


def test_an_image_built_with_the_psk_in_the_environment_holds_none_of_it(tmp_path: Path) -> None:
    """The host firmware (the Wi-Fi station's build) configured and built with the PSK and an SSID
    in the environment: neither its image nor any file of its build directory holds the PSK, as
    bytes or as their hex (doctor's search, hil.doctor.board_checks.baked_into, which finds one
    planted)."""
    psk = "Img-" + secrets.token_urlsafe(12)
    env = {**os.environ, PSK_ENV: psk, "HIL_WIFI_SSID": "hil-sim-ap"}
    build = tmp_path / "build"
    firmware = PROJECT_ROOT / "firmware"
    for argv in (["cmake", "--preset", "host-default", "-B", str(build)], ["cmake", "--build", str(build)]):
        run = subprocess.run(argv, cwd=firmware, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        assert psk not in run.stdout + run.stderr
    image = build / "host" / "hil-fw-host"
    assert image.is_file() and image.stat().st_size > 100_000, image
    assert baked_into(psk.encode(), [build]) == []
    assert files_holding(build, (psk.lower(), psk.encode().hex())) == []
    (build / "generated" / "planted.h").write_text(f'static const char psk[] = "{psk}";\n')
    assert baked_into(psk.encode(), [build]) == [build / "generated" / "planted.h"]
