"""The Cortex-M7 firmware image on QEMU's mps2-an500 machine, run inside the DUT namespace with
its LAN9118 on the bench's tap device and its UART on a pseudo-terminal (QEMU's `-serial pty`)."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path
from typing import Self

from hil.errors import BenchError, DutError
from hil.proc import stop_process

QEMU = "qemu-system-arm"
MACHINE = "mps2-an500"
_PTY = re.compile(r"char device redirected to (/dev/pts/\d+)")


class QemuDutProcess:
    def __init__(self, image: Path, netns_prefix: list[str], tap: str, log_path: Path) -> None:
        self.image = image
        self.netns_prefix = netns_prefix
        self.tap = tap
        self.log_path = log_path
        self.console_port: str | None = None
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout_s: float = 10.0) -> None:
        if not self.image.is_file():
            raise BenchError(f"firmware image not found: {self.image} (build it with firmware/tools/build-boards.sh)")
        argv = [
            *self.netns_prefix, QEMU, "-M", MACHINE, "-display", "none", "-monitor", "none", "-serial", "pty",
            "-kernel", str(self.image), "-nic", f"tap,ifname={self.tap},script=no,downscript=no",
        ]  # fmt: skip
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                start_new_session=True,
            )  # fmt: skip
        except FileNotFoundError:
            raise BenchError(f"{QEMU} is not installed (Debian package qemu-system-arm)") from None
        found = threading.Event()
        log = self.log_path.open("w")

        def pump() -> None:  # QEMU's output: the pty line first, then anything it complains about
            assert self._proc is not None and self._proc.stdout is not None
            for line in self._proc.stdout:
                log.write(line)
                log.flush()
                m = _PTY.search(line)
                if m:
                    self.console_port = m.group(1)
                    found.set()
            log.close()

        threading.Thread(target=pump, daemon=True).start()
        if not found.wait(timeout_s):
            self.stop()
            raise DutError(f"QEMU gave no console within {timeout_s:g} s: {self.log_path.read_text()[-300:]}")

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        stop_process(proc)  # type: ignore[arg-type]
