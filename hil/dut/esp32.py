"""DUT kind `esp32`: an ESP32 board running firmware/esp32 (ESP-IDF), flashed with esptool over
its USB serial port from the build_<target>_<config> directory of a build configuration, then
joined to the bench's access point; its console is the same USB serial port.

The window and MSS builds of the sweeps are the project's sdkconfig.ci.<config> files: a config
named wnd<k> is a window build, mss<n> an MSS build, with the values the files set.
"""

from __future__ import annotations

import os
from pathlib import Path

from hil.config.bench import DutConfig
from hil.dut.board import RealBoard
from hil.dut.wifi import WifiStation
from hil.errors import BenchError
from hil.esp_idf_build import IdfBuild, load_build, project_configs, resolve_build_dir
from hil.flashers import flash_esptool


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


class Esp32Dut(RealBoard, WifiStation):
    def __init__(self, cfg: DutConfig, workdir: Path) -> None:
        self.cfg = cfg
        self.workdir = workdir
        self.idf = cfg.idf
        self.flash_count = 0
        self.current_config: str | None = None
        self.flash_log = workdir / "flash.log"
        self.build: IdfBuild | None = None
        self.wifi = None
        self.window_ladder, self.mss_configs = _ladders(self.idf.project_dir)

    @property
    def console_port(self) -> str:
        return self.cfg.console.port

    @property
    def default_config(self) -> str:
        return self.idf.configs[0]

    def build_for(self, config: str) -> IdfBuild:
        path = resolve_build_dir(self.idf.project_dir, self.idf.target, config)
        return load_build(path, self.idf.target, config)

    def flash(self, config: str | None = None) -> None:
        """Writes the build of a configuration and resets the chip; the Wi-Fi link is joined
        again by the next test (connect_link)."""
        config = config or self.default_config
        build = self.build_for(config)
        port = self.console_port
        if not os.path.exists(port):
            raise BenchError(f"DUT {self.cfg.name}: serial port {port} does not exist (board plugged in?)")
        flash_esptool(build, port, self.idf.flash_baud, self.flash_log)
        self.build = build
        self.current_config = config
        self.wifi = None
        self.flash_count += 1
