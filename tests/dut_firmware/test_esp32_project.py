"""The ESP32 project (firmware/esp32) checked without ESP-IDF or a chip: its Kconfig with
esp-idf-kconfig's kconfcheck; every sdkconfig.defaults + sdkconfig.ci.<config> pair resolved by
kconfgen against the project's Kconfig and the declarations of the ESP-IDF symbols it sets
(check/Kconfig.idf-subset, written from ESP-IDF's Kconfig reference), so an unknown symbol or a
value outside ESP-IDF's range is caught; the component manifest with the IDF Component
Manager's own linter, every dependency pinned; and the ladder the ESP32 adapter reads from it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hil.config.sections import ESP32_PROJECT_DIR
from hil.dut.esp32 import _ladders
from hil.dut.esp_idf_build import project_configs, read_sdkconfig_file

pytestmark = pytest.mark.selftest

PROJECT = ESP32_PROJECT_DIR
CHECK_KCONFIG = PROJECT / "check" / "Kconfig"
CONFIGS = sorted(f.name.removeprefix("sdkconfig.ci.") for f in PROJECT.glob("sdkconfig.ci.*"))
LADDER = ("wnd2", "wnd4", "wnd16", "mss536", "sndbuf2", "best", "default")


def kconfgen(tmp_path: Path, *defaults: Path) -> tuple[dict[str, str], str]:
    """Resolves the defaults files like an ESP-IDF build does; returns the resulting CONFIG_
    values and kconfgen's notes."""
    out = tmp_path / "sdkconfig.out"
    argv = [sys.executable, "-m", "kconfgen", "--kconfig", str(CHECK_KCONFIG), "--config", str(tmp_path / "sdkconfig"),
            *(a for d in defaults for a in ("--defaults", str(d))), "--env", "IDF_TARGET=esp32",
            "--env", f"HIL_ESP32_DIR={PROJECT}", "--output", "config", str(out)]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    values = {}
    for line in out.read_text().splitlines():
        m = re.match(r"^(CONFIG_[A-Z0-9_]+)=(.*)$", line)
        if m:
            values[m.group(1)] = m.group(2).strip('"')
    return values, proc.stdout + proc.stderr


def test_every_config_of_the_ladder_is_there() -> None:
    assert set(LADDER) <= set(CONFIGS), f"missing sdkconfig.ci files: {set(LADDER) - set(CONFIGS)}"


def test_project_kconfig_passes_kconfcheck() -> None:
    proc = subprocess.run([sys.executable, "-m", "kconfcheck", str(PROJECT / "main" / "Kconfig.projbuild")],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("config", CONFIGS)
def test_sdkconfig_files_resolve_to_exactly_what_they_set(tmp_path: Path, config: str) -> None:
    files = (PROJECT / "sdkconfig.defaults", PROJECT / f"sdkconfig.ci.{config}")
    wanted = {**read_sdkconfig_file(files[0]), **read_sdkconfig_file(files[1])}
    got, notes = kconfgen(tmp_path, *files)
    assert "unknown kconfig symbol" not in notes, notes
    differ = {k: (v, got.get(k)) for k, v in wanted.items() if got.get(k) != v and not (v == "n" and k not in got)}
    assert not differ, f"set -> resolved (unknown, out of range or dependency not met): {differ}\n{notes}"
    assert got["CONFIG_HIL_FW_VARIANT"] == config, "each sdkconfig.ci.<config> names itself in HIL_FW_VARIANT"


def test_the_check_catches_an_out_of_range_value(tmp_path: Path) -> None:
    bad = tmp_path / "sdkconfig.ci.bad"
    bad.write_text('CONFIG_HIL_FW_VARIANT="bad"\nCONFIG_LWIP_TCP_MSS=100\n')
    got, _ = kconfgen(tmp_path, PROJECT / "sdkconfig.defaults", bad)
    assert got["CONFIG_HIL_FW_VARIANT"] == "bad"  # the file was read: its MSS was refused, not ignored
    assert got.get("CONFIG_LWIP_TCP_MSS") != "100"


def test_window_ladder_rises_and_mss_builds_differ() -> None:
    ladder, msses = _ladders(PROJECT)
    windows = {name: int(v["CONFIG_LWIP_TCP_WND_DEFAULT"]) for name, v in project_configs(PROJECT).items()}
    names = [name for name, _ in ladder]
    assert names[0] == "wnd2" and "default" in names and names[-1] == "wnd16", ladder
    assert [windows[n] for n in names] == sorted(windows[n] for n in names) and len(set(names)) == len(names)
    assert msses[0][1] == 536 and len({mss for _, mss in msses}) == len(msses) >= 2


def test_component_manifest_is_valid_and_pinned() -> None:
    manifest = PROJECT / "main" / "idf_component.yml"
    compote = Path(sys.executable).parent / "compote"
    proc = subprocess.run([str(compote), "manifest", "lint", str(manifest)], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    deps = yaml.safe_load(manifest.read_text())["dependencies"]
    assert "idf" in deps and any("iperf-cmd" in name for name in deps) and any("ping" in name for name in deps)
    for name, spec in deps.items():
        if name == "idf":
            continue
        version = spec["version"] if isinstance(spec, dict) else spec
        assert re.fullmatch(r"==\d+\.\d+\.\d+", str(version)), f"{name} is not pinned to one version: {version!r}"
