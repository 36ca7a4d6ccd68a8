"""DUT kind `qemu`: the cross-built Cortex-M7 image (board mps2-an500) on QEMU inside the DUT
namespace, its LAN9118 on the bench's tap device and its UART on the bench-owned console
("flashing" boots the selected image; see hil.dut.local)."""

from __future__ import annotations

from pathlib import Path

from hil.config.bench import DutConfig
from hil.dut.images import ImageSource
from hil.dut.local import DutProgram, LocalDut
from hil.host_dut import PtySerialLine
from hil.netns import TAP, VirtualTopology
from hil.paths import BUILD_BOARDS_SCRIPT, board_firmware
from hil.qemu import MACHINE, QemuDutProcess


def _board_image(config: str) -> Path:
    return board_firmware(MACHINE, config)


class QemuDut(LocalDut):
    # The emulated LAN9118 RX FIFO holds ~10.5 KB (six full frames) and drops silently beyond
    # that: the board's windows stay at or below 6 x MSS.
    window_ladder = (("wnd2", 2), ("default", 4), ("wnd6", 6))
    mss_configs = (("mss536", 536), ("default", 1460))

    def __init__(self, cfg: DutConfig, topology: VirtualTopology, workdir: Path) -> None:
        super().__init__(cfg, topology, workdir, ImageSource(cfg, BUILD_BOARDS_SCRIPT, f"{MACHINE}-", _board_image))

    def _start(self, image: Path, line: PtySerialLine) -> DutProgram:
        prefix = self.topology.exec_prefix(self.topology.dut_ns)
        proc = QemuDutProcess(image, prefix, TAP, line, self.workdir / "qemu.log", self.cfg.network.dut_mac)
        proc.start()
        return proc

    def main_loop_scheduling(self) -> str:
        """How QEMU's main loop (tap -> emulated RX FIFO) is scheduled, for the report."""
        program = self._program
        return program.main_loop_scheduling if isinstance(program, QemuDutProcess) else "QEMU not started"
