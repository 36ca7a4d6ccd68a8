"""DUT kind `preflashed`: a board whose firmware is already on it - programmed out of band, by
another job, by a labgrid strategy, or a product as it ships - reached over its console (a serial
port, or a labgrid place's RFC 2217 port) and cabled to the PC's bench NIC. The suite programs
nothing: "flashing" it checks that its console port is there; its console then says what it is
(the project's firmware, or a stock test firmware in its dialect)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from hil.config.sections import DutBase
from hil.console.dialects.capabilities import DialectInfo
from hil.dut.adapter import BenchLink
from hil.dut.board import RealBoard, local_port_missing
from hil.dut.kinds import register_kind
from hil.dut.section import KindSection
from hil.errors import BenchError


class PreflashedConfig(KindSection):
    """`kind: preflashed`: a board the suite does not program; its console and its link only."""

    FLASHERS: ClassVar[tuple[str, ...]] = ("none",)

    kind: Literal["preflashed"]
    description: Annotated[str, Field(min_length=1, max_length=200)] = "a board flashed out of band"

    @classmethod
    def speaks(cls, info: DialectInfo) -> bool:
        """Whatever was flashed on it: any dialect."""
        return True


class PreflashedBoard(RealBoard):
    window_ladder: tuple[tuple[str, int], ...] = ()
    mss_configs: tuple[tuple[str, int], ...] = ()
    default_config = "default"  # what is on the board: the bench file's only configuration

    def __init__(self, cfg: PreflashedConfig, workdir: Path) -> None:
        self.cfg = cfg
        self.workdir = workdir
        self.flash_count = 0
        self.flashed: tuple[Path, ...] = ()  # the files last written to the DUT (its build's identity)
        self.current_config: str | None = None
        self.flash_log = workdir / "flash.log"

    @property
    def console_port(self) -> str:
        return self.cfg.console.port

    def flash(self, config: str | None = None) -> None:
        """Programs nothing: checks the console port is there (its console answers next)."""
        if local_port_missing(self.console_port):
            raise BenchError(f"DUT {self.cfg.name}: console port {self.console_port} does not exist")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.flash_log.write_text(f"{self.cfg.description}: not programmed by the suite\n")
        self.current_config = config or self.default_config
        self.flash_count += 1

    def environment(self) -> dict[str, str]:
        return {"Board": f"{self.cfg.description} (kind preflashed: the suite programs nothing)"}


@register_kind(PreflashedConfig)
def _make(cfg: DutBase, link: BenchLink, workdir: Path) -> PreflashedBoard:
    assert isinstance(cfg, PreflashedConfig)
    return PreflashedBoard(cfg, workdir)
