"""DUT kind `esp32`: an ESP32 board running firmware/esp32 (ESP-IDF), flashed with esptool over
its USB serial port from the build_<target>_<config> directory of a build configuration, then
joined to the bench's access point; its console is the same USB serial port.

The window and MSS builds of the sweeps are the project's sdkconfig.ci.<config> files: a config
named wnd<k> is a window build, mss<n> an MSS build, with the values the files set.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import model_validator

from hil.config.sections import ESP32_PROJECT_DIR, DutBase, EspIdfConfig, WifiConfig
from hil.dut.adapter import BenchLink
from hil.dut.board import RealBoard, local_port_missing
from hil.dut.esp_idf_build import IdfBuild, load_build, project_configs, resolve_build_dir
from hil.dut.flashers import flash_idf_serial
from hil.dut.kinds import register_kind
from hil.dut.section import KindSection
from hil.dut.wifi import WifiStation
from hil.errors import BenchError


def _ladders(project_dir: Path) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    """(config, TCP_WND in MSS) for the window ladder and (config, TCP_MSS) for the MSS builds,
    read from the project's sdkconfig files; empty when the project is not there."""
    if not (project_dir / "sdkconfig.defaults").is_file():
        return (), ()
    configs = project_configs(project_dir)
    windows: list[tuple[int, str, int]] = []
    msses: list[tuple[str, int]] = []
    for name, values in configs.items():
        mss = int(values.get("CONFIG_LWIP_TCP_MSS", "1440"))
        wnd = int(values.get("CONFIG_LWIP_TCP_WND_DEFAULT", "5760"))
        if name.startswith("wnd") or name == "default":
            windows.append((wnd, name, round(wnd / mss)))
        if name.startswith("mss") or name == "default":
            msses.append((name, mss))
    ladder = tuple((name, k) for _, name, k in sorted(windows))
    return ladder, tuple(sorted(msses, key=lambda m: m[1]))


class Esp32DutConfig(KindSection):
    """`kind: esp32`: an ESP32 board on Wi-Fi running firmware/esp32, flashed with esptool from
    ESP-IDF build directories; the matrix runs once per build configuration of `esp_idf.configs`.
    With a stock ESP-IDF `console.dialect` (Espressif's iperf example) it runs that example instead,
    built in `esp_idf.project_dir` (its `build` directory), flashed by pytest-embedded-idf itself
    when the first test opens the board (once per session: its port/app cache)."""

    FLASHERS: ClassVar[tuple[str, ...]] = ("esptool",)
    STOCK_SDKS: ClassVar[frozenset[str]] = frozenset({"esp-idf"})
    EMBEDDED_SERVICES: ClassVar[str] = "esp,idf,serial"  # as Espressif's own tests open a chip
    SKIP_AUTOFLASH: ClassVar[bool | None] = True  # flashed once per build configuration, not per test
    PER_CONFIG_MATRIX: ClassVar[bool] = True  # as ESP-IDF's CI: each test once per sdkconfig.ci.<config>

    kind: Literal["esp32"]
    wifi: WifiConfig | None = None
    esp_idf: EspIdfConfig | None = None  # target and build configurations (default: esp32, default)

    @model_validator(mode="after")
    def _esp32(self) -> Esp32DutConfig:
        if self.wifi is None and not self.stock_firmware:
            raise ValueError("kind 'esp32' needs wifi: the access point's ssid and psk_env")
        if self.firmware.image is not None:
            raise ValueError("kind 'esp32' is flashed from ESP-IDF build directories: give esp_idf.configs")
        if self.stock_firmware:
            dialect = self.console.dialect
            if self.idf.project_dir == ESP32_PROJECT_DIR:
                raise ValueError(
                    f"console.dialect {dialect}: esp_idf.project_dir is the example's directory "
                    "(e.g. $IDF_PATH/examples/wifi/iperf, built there with idf.py build), not firmware/esp32"
                )
            if len(self.idf.configs) != 1:
                raise ValueError(f"console.dialect {dialect}: the example has one build (one esp_idf.configs)")
        return self

    def embedded_skip_autoflash(self) -> bool | None:
        """The project's builds are flashed by the adapter (once per configuration); the stock
        example by pytest-embedded-idf's own flashing when the first test opens the board."""
        return not self.stock_firmware

    @property
    def idf(self) -> EspIdfConfig:
        return self.esp_idf or EspIdfConfig()

    def ladders(self) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
        return ((), ()) if self.stock_firmware else _ladders(self.idf.project_dir)

    def builds(self) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
        """The project's sdkconfig.ci.<config> files with their lwIP TCP settings."""
        if self.stock_firmware or not (self.idf.project_dir / "sdkconfig.defaults").is_file():
            return ()
        return tuple(
            (name, tuple(sorted((k, v) for k, v in values.items() if k.startswith("CONFIG_LWIP_TCP_"))))
            for name, values in project_configs(self.idf.project_dir).items()
        )

    @property
    def build_configs(self) -> list[str]:
        return list(self.idf.configs)

    def config_id(self, config: str) -> str:
        return f"{self.idf.target}-{config}"  # build_<target>_<config>, as ESP-IDF's CI names them

    def check_secrets(self) -> None:
        if self.wifi is not None:
            self.wifi.psk()

    def embedded_target(self) -> str | None:
        return self.idf.target

    def embedded_app_path(self) -> str | None:
        return str(self.idf.project_dir)


class Esp32Dut(WifiStation, RealBoard):
    cfg: Esp32DutConfig

    def __init__(self, cfg: Esp32DutConfig, workdir: Path) -> None:
        self.cfg = cfg
        self.workdir = workdir
        self.idf = cfg.idf
        self.flash_count = 0
        self.flashed: tuple[Path, ...] = ()  # the files last written to the DUT (its build's identity)
        self.current_config: str | None = None
        self.flash_log = workdir / "flash.log"
        self.build: IdfBuild | None = None
        self.wifi = None
        self.window_ladder, self.mss_configs = cfg.ladders()

    @property
    def console_port(self) -> str:
        return self.cfg.console.port

    @property
    def default_config(self) -> str:
        return self.idf.configs[0]

    def build_for(self, config: str) -> IdfBuild:
        path = resolve_build_dir(self.idf.project_dir, self.idf.target, config)
        return load_build(path, self.idf.target, config, project_build=not self.cfg.stock_firmware)

    def flash(self, config: str | None = None) -> None:
        """Writes the build of a configuration and resets the chip; the Wi-Fi link is joined
        again by the next test (associate). Espressif's example: its build is checked here and
        written by pytest-embedded-idf (IdfSerial) when the first test opens the port."""
        config = config or self.default_config
        build = self.build_for(config)
        port = self.console_port
        if local_port_missing(port):
            raise BenchError(f"DUT {self.cfg.name}: serial port {port} does not exist (board plugged in?)")
        if not self.cfg.stock_firmware:
            flash_idf_serial(build, port, self.idf.flash_baud, self.flash_log)
        self.build = build
        self.flashed = tuple(f.path for f in build.flash_files)
        self.current_config = config
        self.wifi = None
        self.flash_count += 1

    @property
    def embedded_build_dir(self) -> str | None:  # type: ignore[override]
        return str(self.build.path) if self.build is not None else None

    def environment(self) -> dict[str, str]:
        env = {"ESP-IDF_build": str(self.build.path)} if self.build else {}
        return env | ({"Wi-Fi": self.wifi.describe()} if self.wifi else {})


@register_kind(Esp32DutConfig)
def _make(cfg: DutBase, link: BenchLink, workdir: Path) -> Esp32Dut:
    assert isinstance(cfg, Esp32DutConfig)
    return Esp32Dut(cfg, workdir)
