"""DUT kind `same70`: a SAME70 Xplained board flashed through its EDBG probe (pyocd or OpenOCD,
selectable) with the board image of a build configuration, then reset; its console is the EDBG
virtual COM port."""

from __future__ import annotations

import os
from pathlib import Path

from hil.config.bench import DutConfig
from hil.dut.board import RealBoard
from hil.dut.images import ImageSource
from hil.errors import BenchError
from hil.flashers import FLASHERS
from hil.paths import BUILD_BOARDS_SCRIPT, board_firmware

BOARD = "same70-xplained"


def _board_image(config: str) -> Path:
    return board_firmware(BOARD, config)


class Same70Dut(RealBoard):
    window_ladder: tuple[tuple[str, int], ...] = (("default", 8),)
    mss_configs: tuple[tuple[str, int], ...] = (("default", 1460),)

    def __init__(self, cfg: DutConfig, workdir: Path) -> None:
        self.cfg = cfg
        self.workdir = workdir
        self.flash_count = 0
        self.current_config: str | None = None
        self.images = ImageSource(cfg, BUILD_BOARDS_SCRIPT, f"{BOARD}-", _board_image)
        self.flash_log = workdir / "flash.log"

    @property
    def console_port(self) -> str:
        return self.cfg.console.port

    @property
    def default_config(self) -> str:
        return self.images.default_config

    def flash(self, config: str | None = None) -> None:
        """Programs the image of a build configuration and resets the board."""
        config = config or self.default_config
        image = self.images.image(config)
        FLASHERS[self.cfg.flasher_name](image, self.cfg.probe, self.flash_log)
        port = self.console_port
        if not os.path.exists(port):
            raise BenchError(f"DUT {self.cfg.name}: console port {port} does not exist (the EDBG's serial port?)")
        self.current_config = config
        self.flash_count += 1
