"""DUT kind `same70`: a SAME70 Xplained board flashed through its EDBG probe (pyocd or OpenOCD,
selectable) with the board image of a build configuration, then reset; its console is the EDBG
virtual COM port."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import model_validator

from hil.config.sections import DutBase, ProbeConfig
from hil.dut.adapter import BenchLink
from hil.dut.board import RealBoard, local_port_missing
from hil.dut.flashers import FLASHERS
from hil.dut.images import ARM_ELF, ImageSource
from hil.dut.kinds import register_kind
from hil.dut.presets import Builds, Ladder, builds, ladders
from hil.dut.section import KindSection
from hil.errors import BenchError
from hil.paths import BUILD_BOARDS_SCRIPT, board_firmware

BOARD = "same70-xplained"
PRESET_PREFIX = f"{BOARD}-"


class Same70DutConfig(KindSection):
    """`kind: same70`: a SAME70 Xplained board, flashed through its EDBG probe. With a stock
    Zephyr `console.dialect` (Zephyr's zperf sample) it runs that firmware, flashed from its
    `zephyr.elf` (`firmware.image`)."""

    FLASHERS: ClassVar[tuple[str, ...]] = ("pyocd", "openocd")
    IMAGE_FORMAT: ClassVar[str | None] = ARM_ELF
    STOCK_SDKS: ClassVar[frozenset[str]] = frozenset({"zephyr"})

    kind: Literal["same70"]
    probe: ProbeConfig = ProbeConfig()

    @model_validator(mode="after")
    def _stock_image(self) -> Same70DutConfig:
        if self.stock_firmware and self.firmware.image is None:
            raise ValueError(
                f"console.dialect {self.console.dialect}: give firmware.image, {self.dialect.image or 'its image'}"
            )
        return self

    def ladders(self) -> tuple[Ladder, Ladder]:
        return ((), ()) if self.stock_firmware else ladders(PRESET_PREFIX)

    def builds(self) -> Builds:
        return () if self.stock_firmware else builds(PRESET_PREFIX)

    def prebuilt_image(self) -> Path | None:
        return None if self.stock_firmware else _board_image(self.build_configs[0])


def _board_image(config: str) -> Path:
    return board_firmware(BOARD, config)


class Same70Dut(RealBoard):
    def __init__(self, cfg: Same70DutConfig, workdir: Path) -> None:
        self.cfg = cfg
        self.window_ladder, self.mss_configs = cfg.ladders()
        self.workdir = workdir
        self.flash_count = 0
        self.flashed: tuple[Path, ...] = ()  # the files last written to the DUT (its build's identity)
        self.current_config: str | None = None
        self.images = ImageSource(cfg, BUILD_BOARDS_SCRIPT, PRESET_PREFIX, _board_image)
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
        self.flashed = (image,)
        port = self.console_port
        if local_port_missing(port):
            raise BenchError(f"DUT {self.cfg.name}: console port {port} does not exist (the EDBG's serial port?)")
        self.current_config = config
        self.flash_count += 1


@register_kind(Same70DutConfig)
def _make(cfg: DutBase, link: BenchLink, workdir: Path) -> Same70Dut:
    assert isinstance(cfg, Same70DutConfig)
    return Same70Dut(cfg, workdir)
