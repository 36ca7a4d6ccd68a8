"""ESP-IDF build directories and their flashing, without a chip: a synthetic build directory laid
out as ESP-IDF v5 writes it (flasher_args.json, config/sdkconfig.json, the three images), parsed
by pytest-embedded-idf's IdfApp through hil.dut.esp_idf_build and written by its IdfSerial; esptool
replaced at its boundary only (the chip it detects and `esptool.main`), so every argument
IdfSerial gives a real esptool is checked, and the real esptool meets a port nothing answers on."""

from __future__ import annotations

import json
import os
import pty
from pathlib import Path

import esptool
import pytest
import serial as pyserial

from hil.config.errors import ConfigError
from hil.dut.esp_idf_build import build_dir_candidates, load_build, project_configs, resolve_build_dir
from hil.dut.flashers import flash_idf_serial
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


class FakeChip:
    """esptool's connected device, at the boundary where a chip would answer: its serial port a
    pyserial loopback, its connect and reset recorded."""

    CHIP_NAME = "ESP32"

    def __init__(self, port: str) -> None:
        self.serial_port = port
        self._port = pyserial.serial_for_url("loop://", timeout=0.05)
        self.calls: list[str] = []

    def connect(self) -> None:
        self.calls.append("connect")

    def hard_reset(self) -> None:
        self.calls.append("hard_reset")


@pytest.fixture
def chip(monkeypatch: pytest.MonkeyPatch) -> tuple[list[FakeChip], list[list[str]]]:
    """esptool's chip detection and its `main` replaced: the chips IdfSerial connected to, and
    every esptool command it ran on them."""
    chips: list[FakeChip] = []
    commands: list[list[str]] = []

    def connected(ports: list[str], port: str | None = None, **_: object) -> FakeChip:
        chips.append(FakeChip(port or ports[0]))
        return chips[-1]

    monkeypatch.setattr(esptool, "get_default_connected_device", connected)
    monkeypatch.setattr(esptool, "main", lambda args, esp=None: commands.append(list(args)))
    monkeypatch.delenv("ESPBAUD", raising=False)
    return chips, commands


def test_flashes_through_pytest_embedded_idf_with_the_builds_arguments(
    tmp_path: Path, chip: tuple[list[FakeChip], list[list[str]]]
) -> None:
    """IdfSerial.flash itself writes the build: its esptool command is the build's flash files and
    settings at the bench's baud, then the chip is reset (--after hard_reset) and the port closed."""
    chips, commands = chip
    path = make_build(tmp_path, "build_esp32_default")
    flash_idf_serial(load_build(path, "esp32", "default"), "/dev/ttyUSB3", 921600, tmp_path / "flash.log")
    assert commands == [expected_args(path, "/dev/ttyUSB3", 921600)[2:]]  # on the open connection: no --port
    assert chips[0].calls == ["connect"] and not chips[0]._port.is_open
    assert "ESPBAUD" not in os.environ
    assert (tmp_path / "flash.log").read_text().startswith("IdfSerial(port=/dev/ttyUSB3, target=esp32).flash")


def test_a_failed_write_is_one_line(tmp_path: Path, chip: tuple[list[FakeChip], list[list[str]]],
                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    def too_big(args: list[str], esp: object = None) -> None:
        raise esptool.FatalError("File hil-fw.bin (length 2000000) at offset 65536 will not fit in 4194304 bytes\nmore")

    monkeypatch.setattr(esptool, "main", too_big)
    build = load_build(make_build(tmp_path, "build_esp32_default"), "esp32", "default")
    with pytest.raises(BenchError) as exc:
        flash_idf_serial(build, "/dev/ttyUSB0", 460800, tmp_path / "flash.log")
    assert "failed: FatalError: File hil-fw.bin (length 2000000)" in str(exc.value) and "\n" not in str(exc.value)
    assert "will not fit" in (tmp_path / "flash.log").read_text()


def test_no_chip_on_the_port_is_one_line(tmp_path: Path) -> None:
    """The real esptool, through IdfSerial, on a serial port nothing answers on (a pseudo-terminal):
    its connect attempts fail within seconds, and the error names the port."""
    controller, port_fd = pty.openpty()
    port = os.ttyname(port_fd)
    build = load_build(make_build(tmp_path, "build_esp32_default"), "esp32", "default")
    try:
        with pytest.raises(BenchError) as exc:
            flash_idf_serial(build, port, 460800, tmp_path / "flash.log")
    finally:
        os.close(port_fd)
        os.close(controller)
    assert str(exc.value) == (f"flasher esptool (build_esp32_default on {port}): no ESP32 answered on "
                              f"{port} (board connected? right port? port in use?)")  # fmt: skip
    assert "Failed to connect to ESP32" in (tmp_path / "flash.log").read_text()


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
