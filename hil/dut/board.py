"""What every real-board DUT (flashed over a probe or a serial port, never a process of the
bench PC) shares: no process to watch, the flasher's log as its log, nothing to stop."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hil.console.protocol import FinalLine

if TYPE_CHECKING:
    from hil.console.dialects.base import DialectDriver, LinkFacts


def local_port_missing(port: str) -> bool:
    """A serial device path that does not exist (a URL such as rfc2217://host:port is not checked
    here: its console answers or the test fails)."""
    return "://" not in port and not Path(port).exists()


class RealBoard:
    pid = None
    embedded_build_dir: str | None = None
    flash_log: Path

    def alive(self) -> bool:
        """A board has no process to watch: its console answers or the test fails."""
        return True

    def exit_code(self) -> int | None:
        return None

    def process_log(self) -> str:
        try:
            return self.flash_log.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self) -> None:
        """Nothing the session owns on the board side."""

    def identity(self) -> FinalLine | None:
        """The console says what the DUT is."""
        return None

    def associate(self, driver: DialectDriver) -> LinkFacts | None:
        """A wired board has nothing to join."""
        return None

    def environment(self) -> dict[str, str]:
        return {}

    def cpu_meter(self) -> None:
        """A board has its own CPU: the bench PC's load does not slow it."""
        return None
