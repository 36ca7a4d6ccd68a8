"""The Cortex-M7 firmware image on QEMU's mps2-an500 machine, run inside the DUT namespace with
its LAN9118 on the bench's tap device. Its UART0 is QEMU's stdio, and QEMU's stdin/stdout are the
bench-owned pseudo-terminal (PtySerialLine): the suite opens the other side as a serial port, which
stays the same while QEMU is stopped, restarted or started with another image."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Self

from hil.errors import BenchError, DutError
from hil.host_dut import PtySerialLine
from hil.proc import WatchedProcess, stop_process

QEMU = "qemu-system-arm"
MACHINE = "mps2-an500"
START_CHECK_S = 0.3  # QEMU rejects a bad image or NIC at once; after this it is running


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

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def argv(self) -> list[str]:
        nic = f"tap,ifname={self.tap},script=no,downscript=no" + (f",mac={self.mac}" if self.mac else "")
        return [
            *self.netns_prefix, QEMU, "-M", MACHINE, "-display", "none", "-monitor", "none",
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

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        stop_process(proc)  # type: ignore[arg-type]
