"""DUTs that run on the bench PC itself (the host firmware as a process, the board image on
QEMU): "flashing" starts the image, and the console is a pseudo-terminal the bench owns.

The bench-owned console is opened by pytest-embedded's serial service exactly as a USB serial
port, and like one it stays open while the DUT is killed, restarted or flashed with another build
configuration. A program that exited is a DUT fault; the next test re-flashes (restarts) it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from hil.config.sections import DutBase
from hil.console.protocol import FinalLine
from hil.dut.adapter import BenchLink
from hil.dut.images import ImageSource
from hil.errors import BenchError
from hil.plumbing.cpu_plan import place_process
from hil.plumbing.cpu_share import CpuShareMeter, ThreadId, thread_named
from hil.plumbing.host_dut import PtySerialLine
from hil.plumbing.in_path import InPathTopology
from hil.plumbing.netns import VirtualTopology

LocalTopology = VirtualTopology | InPathTopology

if TYPE_CHECKING:
    from hil.console.dialects.base import DialectDriver, LinkFacts


def virtual_topology(link: BenchLink, cfg: DutBase) -> LocalTopology:
    """The virtual link a DUT on the bench PC needs (the bench makes one for every local kind):
    PC <-> DUT, or PC <-> DUT <-> peer for a DUT in the path."""
    wanted = InPathTopology if cfg.in_path else VirtualTopology
    if not isinstance(link, wanted):
        raise BenchError(f"DUT {cfg.name}: kind {cfg.kind!r} runs on the bench PC and needs the virtual link")
    return link


class DutProgram(Protocol):
    @property
    def pid(self) -> int | None: ...
    def alive(self) -> bool: ...
    def exit_code(self) -> int | None: ...
    def log_text(self) -> str: ...
    def stop(self) -> None: ...


class LocalDut(ABC):
    # the thread that runs the firmware, by name (None: the program's main thread), and what it is
    cpu_thread_name: str | None = None
    cpu_thread_what = "the firmware's process"
    window_ladder: tuple[tuple[str, int], ...]  # (build config, TCP_WND in MSS) for the DUT window sweep
    mss_configs: tuple[tuple[str, int], ...]  # (build config, TCP_MSS) for the DUT MSS builds

    embedded_build_dir = None

    def __init__(self, cfg: DutBase, topology: LocalTopology, workdir: Path, images: ImageSource) -> None:
        self.cfg = cfg
        self.topology = topology
        self.workdir = workdir
        self.images = images
        self.flash_count = 0
        self.flashed: tuple[Path, ...] = ()  # the files last written to the DUT (its build's identity)
        self.current_config: str | None = None
        self._program: DutProgram | None = None
        self._line: PtySerialLine | None = None
        self._meter: CpuShareMeter | None = None
        self._cpu_thread_cache: ThreadId | None = None
        self.placed = "not started"  # where its program runs on the bench PC's CPUs (_place)

    @abstractmethod
    def _start(self, image: Path, line: PtySerialLine) -> DutProgram:
        """Starts the image with its console on `line`; raises BenchError/DutError on failure."""

    @property
    def console_port(self) -> str:
        return str(self.workdir / "console")

    @property
    def default_config(self) -> str:
        return self.images.default_config

    def flash(self, config: str | None = None) -> None:
        """Installs and starts a build configuration (default: the bench file's), replacing a
        running one. The console port stays the same."""
        config = config or self.default_config
        image = self.images.image(config)
        self.stop_program()
        if self._line is None:
            self._line = PtySerialLine(self.workdir / "console")
        self._program = self._start(image, self._line)
        self.flashed = (image,)
        self.current_config = config
        self.flash_count += 1
        self._place()

    def _place(self) -> None:
        """The program on the DUT's own core at the bench's priority (hil.plumbing.cpu_plan), as a
        board has a CPU of its own; what was done is said in the report's environment."""
        plan, pid = self.topology.cpu_plan, self.pid
        if plan is None or pid is None:
            self.placed = "the scheduler's choice (no CPU plan)"
            return
        refused = place_process(pid, plan.dut_cpus)
        cpus = ",".join(str(c) for c in sorted(plan.dut_cpus))
        self.placed = f"CPU {cpus} at nice -20" if refused is None else f"not placed: {refused}"

    def alive(self) -> bool:
        return self._program is not None and self._program.alive()

    def exit_code(self) -> int | None:
        return self._program.exit_code() if self._program else None

    def process_log(self) -> str:
        return self._program.log_text() if self._program else ""

    @property
    def pid(self) -> int | None:
        return self._program.pid if self._program else None

    def cpu_meter(self) -> CpuShareMeter:
        """The firmware thread's share of a host core, sampled from now on (hil.plumbing.cpu_share)."""
        if self._meter is None:
            self._meter = CpuShareMeter(self.cpu_thread_what, self._cpu_thread)
            self._meter.start()
        return self._meter

    def _cpu_thread(self) -> ThreadId | None:
        pid = self.pid
        if pid is None:
            return None
        if self.cpu_thread_name is None:
            return pid, pid
        cached = self._cpu_thread_cache
        if cached is not None and cached[0] == pid:
            return cached
        tid = thread_named(pid, self.cpu_thread_name)
        self._cpu_thread_cache = (pid, tid) if tid is not None else None
        return self._cpu_thread_cache

    def stop_program(self) -> None:
        if self._program is not None:
            self._program.stop()
            self._program = None

    def identity(self) -> FinalLine | None:
        """The console says what the DUT is."""
        return None

    def associate(self, driver: DialectDriver) -> LinkFacts | None:
        """A wired DUT on the virtual link has nothing to join."""
        return None

    def environment(self) -> dict[str, str]:
        return {"DUT_CPU": self.placed, "Bench_CPUs": self.topology.placement or "the scheduler's choice"}

    def stop(self) -> None:
        """Stops the program and releases the console port (end of the session)."""
        self.stop_program()
        if self._meter is not None:
            self._meter.stop()
            self._meter = None
        if self._line is not None:
            self._line.close()
            self._line = None
