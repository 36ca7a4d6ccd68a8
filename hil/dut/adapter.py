"""What a DUT kind is to the suite: a bench-file section (a pydantic model extending
hil.dut.section.KindSection, tagged by `kind`) and an adapter that flashes the DUT, owns its
console port and says what it knows. Each kind registers itself (hil.dut.kinds); nothing
outside a kind's own module asks which kind a DUT is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from hil.config.sections import DutBase
from hil.plumbing.hardware_link import HardwareLink
from hil.plumbing.in_path import InPathTopology
from hil.plumbing.netns import VirtualTopology

if TYPE_CHECKING:
    from hil.console.dialects.base import DialectDriver, LinkFacts
    from hil.console.protocol import FinalLine
    from hil.plumbing.cpu_share import CpuShareMeter

# the PC's side of the bench: the virtual link (the DUT at its end, or in the path to a peer namespace)
# or a real NIC
BenchLink = VirtualTopology | InPathTopology | HardwareLink


class DutAdapter(Protocol):
    cfg: DutBase
    current_config: str | None
    flash_count: int
    flashed: tuple[Path, ...]  # the files the last flash wrote (none: the suite programs nothing)
    window_ladder: tuple[tuple[str, int], ...]  # (build config, TCP_WND in MSS), rising
    mss_configs: tuple[tuple[str, int], ...]  # (build config, TCP_MSS)

    @property
    def console_port(self) -> str: ...
    @property
    def default_config(self) -> str: ...
    @property
    def pid(self) -> int | None: ...
    @property
    def embedded_build_dir(self) -> str | None:
        """pytest-embedded's build directory of what was flashed (None: not an ESP-IDF build)."""
        ...

    def flash(self, config: str | None = None) -> None: ...
    def alive(self) -> bool: ...
    def exit_code(self) -> int | None: ...
    def process_log(self) -> str: ...
    def stop(self) -> None: ...
    def identity(self) -> FinalLine | None:
        """What a DUT without a console is (its kind says it); None: its console says it."""
        ...

    def associate(self, driver: DialectDriver) -> LinkFacts | None:
        """Joins the DUT's network when it has to (a Wi-Fi station); None when there is nothing to join."""
        ...

    def cpu_meter(self) -> CpuShareMeter | None:
        """The share of a host core the DUT's firmware got, for a DUT that runs on the bench PC
        (None for a board with its own CPU)."""
        ...

    def environment(self) -> dict[str, str]:
        """Facts of this kind for the report's environment (e.g. how QEMU is scheduled)."""
        ...


@dataclass(frozen=True)
class DutKind:
    """A DUT kind: its bench-file section and how to make its adapter on the bench's link."""

    name: str
    config: type[DutBase]
    make: Callable[[DutBase, BenchLink, Path], DutAdapter]
