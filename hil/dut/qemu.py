"""DUT kind `qemu`: the cross-built Cortex-M7 image (board mps2-an500) on QEMU inside the DUT
namespace, its LAN9118 on the bench's tap device and its UART on the bench-owned console
("flashing" boots the selected image; see hil.dut.local)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from hil.config.sections import DutBase
from hil.dut.adapter import BenchLink
from hil.dut.images import ARM_ELF, ImageSource
from hil.dut.kinds import register_kind
from hil.dut.local import DutProgram, LocalDut, virtual_topology
from hil.dut.presets import Builds, Ladder, builds, ladders
from hil.dut.section import KindSection
from hil.paths import BUILD_BOARDS_SCRIPT, board_firmware
from hil.plumbing.cpu_plan import place_cpu_thread
from hil.plumbing.cpu_share import thread_named
from hil.plumbing.host_dut import PtySerialLine
from hil.plumbing.netns import TAP, VirtualTopology
from hil.plumbing.qemu import MACHINE, VCPU_THREAD, QemuDutProcess

PRESET_PREFIX = f"{MACHINE}-"


class QemuDutConfig(KindSection):
    """`kind: qemu`: the Cortex-M7 board image on QEMU's mps2-an500 on the bench PC."""

    FLASHERS: ClassVar[tuple[str, ...]] = ("qemu",)
    IMAGE_FORMAT: ClassVar[str | None] = ARM_ELF
    LOCAL: ClassVar[bool] = True

    kind: Literal["qemu"]
    # Both directions at once, each direction's ACKs queue behind the other's data on the 20-Mbit/s
    # link: the default build's 4 x MSS (2.3 ms of the link) covers the round trip's fixed delays
    # by 0.3-0.8 ms only, so it moves 95.0-95.2 % each way (window-limited) and every delay in the
    # loop lowers it (a 40-ms delayed ACK of the PC's: 89-90 %). The 6 x MSS build (the largest the
    # emulated RX FIFO holds) is limited by the link: 96.9-97.5 % each way, the link's share the
    # other direction's ACKs leave, idle and with a core kept busy (2026-12-04)
    FULL_DUPLEX_BUILD: ClassVar[str | None] = "wnd6"

    def ladders(self) -> tuple[Ladder, Ladder]:
        return ladders(PRESET_PREFIX)

    def builds(self) -> Builds:
        return builds(PRESET_PREFIX)


def _board_image(config: str) -> Path:
    return board_firmware(MACHINE, config)


class QemuDut(LocalDut):
    """The ladders are the mps2-an500 presets: the emulated LAN9118 RX FIFO holds ~10.5 KB (six
    full frames) and drops silently beyond that, so the board's windows stay at or below 6 x MSS.
    The firmware runs on QEMU's vCPU thread: its share of a host core is the board's CPU speed."""

    cpu_thread_name = VCPU_THREAD
    cpu_thread_what = f"QEMU's vCPU thread ({VCPU_THREAD})"

    def __init__(self, cfg: QemuDutConfig, topology: VirtualTopology, workdir: Path) -> None:
        super().__init__(cfg, topology, workdir, ImageSource(cfg, BUILD_BOARDS_SCRIPT, PRESET_PREFIX, _board_image))
        self.window_ladder, self.mss_configs = cfg.ladders()

    def _start(self, image: Path, line: PtySerialLine) -> DutProgram:
        prefix = self.topology.exec_prefix(self.topology.dut_ns)
        tap = self.topology.tap if isinstance(self.topology, VirtualTopology) else TAP
        proc = QemuDutProcess(image, prefix, tap, line, self.workdir / "qemu.log", self.cfg.network.dut_mac)
        proc.start()
        return proc

    def _place(self) -> None:
        """QEMU's vCPU thread (the board's CPU) on the DUT's own core, its main loop (the emulated
        LAN9118 and UART, at real-time priority: hil.plumbing.qemu) and other threads on the
        bench's: a board's MAC and UART work beside its CPU, not on it. With both on one core the
        vCPU waited for its core 5-8 % of a bidirectional TCP test (the main loop preempting it),
        so the emulated CPU's speed depended on the traffic the emulator carried; with the main
        loop on the bench's core it waited 0.4-1.9 %, idle and with a core kept busy (2026-12-04)."""
        plan, pid = self.topology.cpu_plan, self.pid
        if plan is None or pid is None:
            super()._place()
            return
        vcpu = thread_named(pid, VCPU_THREAD)
        if vcpu is None:
            self.placed = f"not placed: QEMU has no thread called {VCPU_THREAD}"
            return
        refused = place_cpu_thread(pid, vcpu, plan)
        dut, bench = (",".join(str(c) for c in sorted(cpus)) for cpus in (plan.dut_cpus, plan.bench_cpus))
        self.placed = (
            f"the vCPU thread on CPU {dut}, QEMU's main loop and other threads on CPU {bench}, at nice -20"
            if refused is None
            else f"not placed: {refused}"
        )

    def main_loop_scheduling(self) -> str:
        """How QEMU's main loop (tap -> emulated RX FIFO) is scheduled, for the report."""
        program = self._program
        return program.main_loop_scheduling if isinstance(program, QemuDutProcess) else "QEMU not started"

    def environment(self) -> dict[str, str]:
        return super().environment() | {"QEMU_main_loop": self.main_loop_scheduling()}


@register_kind(QemuDutConfig)
def _make(cfg: DutBase, link: BenchLink, workdir: Path) -> QemuDut:
    assert isinstance(cfg, QemuDutConfig)
    topology = virtual_topology(link, cfg)
    assert isinstance(topology, VirtualTopology)  # QEMU sits at the end of the link (no role in_path)
    return QemuDut(cfg, topology, workdir)
