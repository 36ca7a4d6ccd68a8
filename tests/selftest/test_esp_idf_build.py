"""ESP-IDF build directories and the esptool command, without a chip: a synthetic build directory
laid out as ESP-IDF v5 writes it (flasher_args.json, config/sdkconfig.json, the three images),
parsed by pytest-embedded-idf's IdfApp through hil.dut.esp_idf_build; esptool replaced at its
boundary only (the `esptool` module the flasher runs, and `esptool.main` for pytest-embedded-idf's
own IdfSerial.flash), so every argument the suite would give a real esptool is checked."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest_embedded_idf import serial as idf_serial
from pytest_embedded_idf.app import IdfApp

from hil.config.errors import ConfigError
from hil.dut.esp_idf_build import build_dir_candidates, load_build, project_configs, resolve_build_dir
from hil.dut.flashers import flash_esptool
from hil.errors import BenchError
from tests.support.synthetic_idf_build import FLASHER_ARGS, make_build

pytestmark = pytest.mark.selftest


def expected_args(build: Path, port: str, baud: int) -> list[str]:
    return [
        "--port", port, "--after", "hard_reset", "--before", "default_reset", "--chip", "esp32",
        "--baud", str(baud), "write-flash",
        "0x1000", str(build / "bootloader/bootloader.bin"),
        "0x8000", str(build / "partition_table/partition-table.bin"),
        "0x10000", str(build / "hil-fw.bin"),
        "--flash_mode", "dio", "--flash_size", "4MB", "--flash_freq", "40m",
    ]  # fmt: skip


def test_build_dir_lookup_order_is_esp_idf_ci_s(tmp_path: Path) -> None:
    assert build_dir_candidates("esp32", "wnd2") == ["build_esp32_wnd2", "build_esp32", "build_wnd2", "build"]
    make_build(tmp_path, "build")
    assert resolve_build_dir(tmp_path, "esp32", "wnd2") == tmp_path / "build"
    make_build(tmp_path, "build_esp32_wnd2", variant="wnd2")
    assert resolve_build_dir(tmp_path, "esp32", "wnd2") == tmp_path / "build_esp32_wnd2"


def test_no_build_names_what_was_looked_for_and_how_to_build(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no ESP-IDF build for target esp32 config 'best' .*build_esp32_best.*"
                       r"firmware/esp32/tools/build.sh --target esp32 best"):  # fmt: skip
        resolve_build_dir(tmp_path, "esp32", "best")


def test_parses_a_build_directory(tmp_path: Path) -> None:
    path = make_build(tmp_path, "build_esp32_default")
    build = load_build(path, "esp32", "default")
    assert build.target == "esp32" and build.variant == "default"
    assert [(f.offset, f.path.name) for f in build.flash_files] == [
        (0x1000, "bootloader.bin"), (0x8000, "partition-table.bin"), (0x10000, "hil-fw.bin"),
    ]  # fmt: skip
    assert build.elf == path / "hil-fw.elf"
    assert build.sdkconfig["LWIP_TCP_WND_DEFAULT"] == 5760


def test_exact_esptool_arguments(tmp_path: Path) -> None:
    path = make_build(tmp_path, "build_esp32_default")
    build = load_build(path, "esp32", "default")
    assert build.esptool_args("/dev/ttyUSB0", 460800) == expected_args(path, "/dev/ttyUSB0", 460800)


def test_same_arguments_as_pytest_embedded_idf_gives_esptool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """IdfSerial.flash (undecorated: no chip to connect to) with esptool.main replaced."""
    path = make_build(tmp_path, "build_esp32_default")
    seen: list[list[str]] = []
    monkeypatch.setattr(idf_serial.esptool, "main", lambda args, esp=None: seen.append(list(args)))
    monkeypatch.setenv("ESPBAUD", "460800")
    app = IdfApp(app_path=str(tmp_path), build_dir=str(path))
    fake_serial = SimpleNamespace(app=app, erase_nvs=False, _force_flag=lambda app=None: [], _meta=None, esp=None)
    idf_serial.IdfSerial.flash.__wrapped__(fake_serial, app)
    ours = load_build(path, "esp32", "default").esptool_args("/dev/ttyUSB0", 460800)
    assert seen == [ours[2:]]  # theirs run on an open connection: no --port


@pytest.fixture
def fake_esptool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An `esptool` module first on the path of the flasher's `python -m esptool`: records its
    arguments, prints what a real esptool prints, exits with the code it is told."""
    pkg = tmp_path / "fake" / "esptool"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(
        "import json, os, sys\n"
        "open(os.environ['FAKE_ESPTOOL_LOG'], 'w').write(json.dumps(sys.argv[1:]))\n"
        "print(os.environ.get('FAKE_ESPTOOL_OUT', 'Hash of data verified.'))\n"
        "sys.exit(int(os.environ.get('FAKE_ESPTOOL_RC', '0')))\n"
    )
    log = tmp_path / "esptool-argv.json"
    monkeypatch.setenv("PYTHONPATH", str(pkg.parent))
    monkeypatch.setenv("FAKE_ESPTOOL_LOG", str(log))
    return log


def test_flasher_runs_esptool_with_exactly_those_arguments(tmp_path: Path, fake_esptool: Path) -> None:
    path = make_build(tmp_path, "build_esp32_default")
    build = load_build(path, "esp32", "default")
    flash_esptool(build, "/dev/ttyUSB3", 921600, tmp_path / "flash.log")
    assert json.loads(fake_esptool.read_text()) == expected_args(path, "/dev/ttyUSB3", 921600)
    assert (tmp_path / "flash.log").read_text().startswith(f"$ {sys.executable} -m esptool --port /dev/ttyUSB3")


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("A fatal error occurred: Failed to connect to ESP32: No serial data received.", "no ESP32 answered on"),
        ("A fatal error occurred: File hil-fw.bin (length 2000000) at offset 65536 will not fit", "failed (exit 2)"),
    ],
)
def test_esptool_failure_is_one_line(
    tmp_path: Path, fake_esptool: Path, monkeypatch: pytest.MonkeyPatch, out: str, message: str
) -> None:
    monkeypatch.setenv("FAKE_ESPTOOL_OUT", out)
    monkeypatch.setenv("FAKE_ESPTOOL_RC", "2")
    build = load_build(make_build(tmp_path, "build_esp32_default"), "esp32", "default")
    with pytest.raises(BenchError) as exc:
        flash_esptool(build, "/dev/ttyUSB0", 460800, tmp_path / "flash.log")
    assert message in str(exc.value) and "build_esp32_default" in str(exc.value) and "\n" not in str(exc.value)


def _break(path: Path, what: str) -> None:
    if what == "no flasher_args":
        (path / "flasher_args.json").unlink()
    elif what == "bad json":
        (path / "flasher_args.json").write_text("{ not json")
    elif what == "no flash_files":
        args = dict(FLASHER_ARGS)
        del args["flash_files"]
        (path / "flasher_args.json").write_text(json.dumps(args))
    elif what == "no sdkconfig":
        (path / "config" / "sdkconfig.json").unlink()
    elif what == "missing image":
        (path / "hil-fw.bin").unlink()


@pytest.mark.parametrize(
    ("what", "message"),
    [
        ("no flasher_args", "has no flasher_args.json"),
        ("bad json", "a JSON file is malformed"),
        ("no flash_files", "flasher_args.json lacks or mangles 'flash_files'"),
        ("no sdkconfig", "has no config/sdkconfig.json"),
        ("missing image", "flash files missing: "),
    ],
)
def test_broken_build_directory_is_one_clear_error(tmp_path: Path, what: str, message: str) -> None:
    path = make_build(tmp_path, "build_esp32_default")
    _break(path, what)
    with pytest.raises(ConfigError) as exc:
        load_build(path, "esp32", "default")
    assert message in str(exc.value) and str(path) in str(exc.value)


def test_a_build_of_another_target_or_config_is_refused(tmp_path: Path) -> None:
    """ESP-IDF's lookup falls back to `build`: measuring it as another configuration would be wrong."""
    make_build(tmp_path, "build", variant="default")
    with pytest.raises(ConfigError, match=r"holds configuration 'default', not 'wnd2'"):
        load_build(resolve_build_dir(tmp_path, "esp32", "wnd2"), "esp32", "wnd2")
    s3 = make_build(tmp_path, "build_esp32s3_default", target="esp32s3")
    with pytest.raises(ConfigError, match="was built for target esp32s3, not esp32"):
        load_build(s3, "esp32", "default")


def test_project_configs_overlay_defaults(tmp_path: Path) -> None:
    (tmp_path / "sdkconfig.defaults").write_text('# base\nCONFIG_LWIP_TCP_MSS=1440\nCONFIG_HIL_FW_VARIANT="default"\n')
    (tmp_path / "sdkconfig.ci.wnd2").write_text('CONFIG_HIL_FW_VARIANT="wnd2"\nCONFIG_LWIP_TCP_WND_DEFAULT=2880\n')
    assert project_configs(tmp_path) == {
        "wnd2": {"CONFIG_LWIP_TCP_MSS": "1440", "CONFIG_HIL_FW_VARIANT": "wnd2", "CONFIG_LWIP_TCP_WND_DEFAULT": "2880"}
    }
    (tmp_path / "sdkconfig.ci.bad").write_text("LWIP_TCP_MSS 536\n")
    with pytest.raises(ConfigError, match=r"sdkconfig.ci.bad:1: not a CONFIG_NAME=value line"):
        project_configs(tmp_path)
