"""DUT kind `cortex-m`: a Cortex-M board of any make - an STM32 Nucleo, a Nordic DK, ... - running
the project's firmware ported to it, or a stock firmware speaking a known console dialect (e.g.
Zephyr's zperf sample), flashed through its debug probe with pyocd from the image the bench file
names (`firmware.image`: ELF, Intel HEX or a raw binary), the part named as pyocd names it
(`probe.target`, one of `pyocd list --targets`); its console is a serial port.

The target is asked of pyocd when the bench file is read: a part pyocd does not know on this PC
(a typo, or a CMSIS pack not installed) is a usage error before any bench comes up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from hil.config.sections import DutBase, ProbeConfig
from hil.dut.adapter import BenchLink
from hil.dut.board import RealBoard, local_port_missing
from hil.dut.flashers import PYOCD_INSTALL, flash_pyocd, pyocd_knows
from hil.dut.images import ARM_IMAGE, check_image_file
from hil.dut.kinds import register_kind
from hil.dut.section import KindSection
from hil.errors import BenchError


class PyocdProbe(ProbeConfig):
    """The board's debug probe as pyocd drives it (CMSIS-DAP, ST-Link, J-Link): `target` is the part
    as pyocd names it (e.g. stm32f429xi, nrf52840); `unique_id` picks one of several probes."""

    target: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")]
    openocd_board: str | None = None  # not for pyocd

    @field_validator("target")
    @classmethod
    def _pyocd_knows_it(cls, v: str) -> str:
        try:
            known = pyocd_knows(v)
        except ImportError:
            raise ValueError(PYOCD_INSTALL) from None
        if not known:
            raise ValueError(
                f"pyocd knows no target {v!r} on this PC (`pyocd list --targets`): a misspelt part, or "
                f"one from a CMSIS pack not installed here (`pyocd pack find {v}`, then `pyocd pack install "
                "<part>`; needs internet)"
            )
        return v

    @model_validator(mode="after")
    def _pyocd_only(self) -> PyocdProbe:
        if "openocd_board" in self.model_fields_set:
            raise ValueError("openocd_board: kind 'cortex-m' is flashed with pyocd (probe.target)")
        return self


class CortexMDutConfig(KindSection):
    """`kind: cortex-m`: a Cortex-M board flashed with pyocd from `firmware.image`, by its part's
    name (`probe.target`); its console on a serial port (`console.port`)."""

    FLASHERS: ClassVar[tuple[str, ...]] = ("pyocd",)
    IMAGE_FORMAT: ClassVar[str | None] = ARM_IMAGE
    STOCK_SDKS: ClassVar[frozenset[str]] = frozenset({"zephyr"})

    kind: Literal["cortex-m"]
    probe: PyocdProbe

    @model_validator(mode="after")
    def _an_image(self) -> CortexMDutConfig:
        if self.firmware.image is None:
            example = f", e.g. {self.dialect.image}" if self.dialect.image else ""
            raise ValueError(
                f"kind {self.kind!r} is flashed from firmware.image: give the image (.elf, .hex or .bin){example}"
            )
        return self


class CortexMDut(RealBoard):
    window_ladder: tuple[tuple[str, int], ...] = ()  # the bench file's image: no builds to climb
    mss_configs: tuple[tuple[str, int], ...] = ()
    default_config = "default"

    def __init__(self, cfg: CortexMDutConfig, workdir: Path) -> None:
        self.cfg = cfg
        self.workdir = workdir
        self.flash_count = 0
        self.flashed: tuple[Path, ...] = ()  # the files last written to the DUT (its build's identity)
        self.current_config: str | None = None
        self.flash_log = workdir / "flash.log"

    @property
    def console_port(self) -> str:
        return self.cfg.console.port

    @property
    def image(self) -> Path:
        """The bench file's image, checked (it exists, is readable and of a format pyocd flashes)."""
        image = self.cfg.firmware.image
        assert image is not None  # the section requires one
        check_image_file(image, ARM_IMAGE, f"DUT {self.cfg.name}")
        return image

    def flash(self, config: str | None = None) -> None:
        """Programs the image through the probe (pyocd flash), then resets the board."""
        flash_pyocd(self.image, self.cfg.probe, self.flash_log)
        self.flashed = (self.image,)
        if local_port_missing(self.console_port):
            raise BenchError(f"DUT {self.cfg.name}: console port {self.console_port} does not exist")
        self.current_config = config or self.default_config
        self.flash_count += 1

    def environment(self) -> dict[str, str]:
        return {"Board": f"Cortex-M {self.cfg.probe.target}, image {self.cfg.firmware.image}"}


@register_kind(CortexMDutConfig)
def _make(cfg: DutBase, link: BenchLink, workdir: Path) -> CortexMDut:
    assert isinstance(cfg, CortexMDutConfig)
    return CortexMDut(cfg, workdir)
