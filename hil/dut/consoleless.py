"""The black boxes: DUTs without a console, whose health is judged from the traffic alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hil.config.sections import DutBase
from hil.errors import BenchError

if TYPE_CHECKING:
    from hil.console.dialects.base import DialectDriver, LinkFacts


class ConsolelessDut:
    """What every DUT without a console shares: no console port, no builds to flash or ladders
    to climb, nothing to join, no thread of the suite's to account for."""

    cfg: DutBase
    window_ladder: tuple[tuple[str, int], ...] = ()
    mss_configs: tuple[tuple[str, int], ...] = ()
    embedded_build_dir = None

    @property
    def console_port(self) -> str:
        raise BenchError(f"DUT {self.cfg.name} is a black box: it has no console")

    def associate(self, driver: DialectDriver) -> LinkFacts | None:
        return None

    def cpu_meter(self) -> None:
        """A black box's forwarding is not a thread of the suite's to account for."""
        return None
