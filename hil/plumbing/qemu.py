"""The Cortex-M7 firmware image on QEMU's mps2-an500 machine, run inside the DUT namespace with
its LAN9118 on the bench's tap device. Its UART0 is QEMU's stdio, and QEMU's stdin/stdout are the
bench-owned pseudo-terminal (PtySerialLine): the suite opens the other side as a serial port, which
stays the same while QEMU is stopped, restarted or started with another image."""

from __future__ import annotations

import logging
import os
import subprocess
import time
from pathlib import Path
from typing import Self

from hil.errors import BenchError, DutError
from hil.plumbing.cpu_plan import raise_session
from hil.plumbing.host_dut import PtySerialLine
from hil.plumbing.proc import WatchedProcess, stop_process

QEMU = "qemu-system-arm"
MACHINE = "mps2-an500"
START_CHECK_S = 0.3  # QEMU rejects a bad image or NIC at once; after this it is running
VCPU_THREAD = "CPU 0/TCG"  # the vCPU thread's name with -name ...,debug-threads=on
MAIN_LOOP_RT_PRIORITY = 1  # SCHED_FIFO, the lowest real-time priority

log = logging.getLogger(__name__)


def raise_main_loop(pid: int) -> str:
    """Puts QEMU's main thread (thread id = process id) at the lowest real-time priority, with
    SCHED_RESET_ON_FORK, and says how it is scheduled.

    The main loop reads the tap and writes each frame into the emulated LAN9118's RX FIFO, which
    holds about 10.5 KB (six full-size frames) and drops silently beyond that. Under normal
    scheduling a busy host (the PC's paced stream sender, iperf, the vCPU thread itself) delays it
    by milliseconds: frames pile up in the tap and arrive as one batch the FIFO cannot hold, so the
    host's scheduler, not the firmware, loses them. Measured on a 2-core host, the stress profile's
    30 x 1400 B bursts lost 3-25 % that way and 0-2.3 % at real-time priority (8 runs).
    The vCPU thread keeps normal scheduling: it spins while a test runs and would starve the host.
    Threads inherit their creator's policy, and QEMU creates threads after start-up (a vCPU or a
    worker pool started by the main loop, whenever it gets to it): with SCHED_RESET_ON_FORK every
    thread the main loop creates from now on starts at normal scheduling, so no other thread can
    become real-time, however the start-up races.
    """
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "normal scheduling (QEMU is gone)"
    if comm != QEMU[:15]:
        return f"normal scheduling (process {pid} is {comm}, not {QEMU})"
    try:
        os.sched_setscheduler(pid, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(MAIN_LOOP_RT_PRIORITY))
    except OSError as exc:
        what = f"normal scheduling (SCHED_FIFO refused: {exc.strerror})"
        log.warning("QEMU main loop left at %s: the emulated NIC may drop bursts the firmware would take", what)
        return what
    return f"SCHED_FIFO {MAIN_LOOP_RT_PRIORITY}"


class QemuDutProcess(WatchedProcess):
    def __init__(
        self, image: Path, netns_prefix: list[str], tap: str, line: PtySerialLine, log_path: Path, mac: str | None
    ) -> None:
        self.image = image
        self.netns_prefix = netns_prefix
        self.tap = tap
        self.line = line
        self.log_path = log_path
        self.mac = mac
        self._proc = None
        self.main_loop_scheduling = "not started"

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def argv(self) -> list[str]:
        nic = f"tap,ifname={self.tap},script=no,downscript=no" + (f",mac={self.mac}" if self.mac else "")
        return [
            *self.netns_prefix, QEMU, "-M", MACHINE, "-name", "hil-dut,debug-threads=on",
            "-display", "none", "-monitor", "none",
            "-chardev", "stdio,id=console,signal=off", "-serial", "chardev:console",
            "-kernel", str(self.image), "-nic", nic,
        ]  # fmt: skip

    def start(self) -> None:
        if not self.image.is_file():
            raise BenchError(f"firmware image not found: {self.image} (build it with firmware/tools/build-boards.sh)")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            try:
                self._proc = subprocess.Popen(
                    self.argv(), stdin=self.line.master, stdout=self.line.master, stderr=log, start_new_session=True
                )
            except FileNotFoundError:
                raise BenchError(f"{QEMU} is not installed (Debian package qemu-system-arm)") from None
        time.sleep(START_CHECK_S)
        if self._proc.poll() is not None:
            code = self._proc.returncode
            self._proc = None
            raise DutError(f"QEMU exited at start (code {code}): {self.log_tail(3)}")
        self.main_loop_scheduling = raise_main_loop(self._proc.pid)
        raise_session(self._proc.pid)  # its own session: the bench's priority (hil.plumbing.cpu_plan)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        stop_process(proc)  # type: ignore[arg-type]
