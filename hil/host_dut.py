"""The host build of the test firmware run as a DUT process inside the DUT namespace.

The program creates a pseudo-terminal for its console and links it at a path the suite chooses,
so the console is opened exactly as a board's USB serial port would be.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from hil.errors import BenchError, DutError
from hil.proc import start_logged, stop_process

CONSOLE_APPEAR_TIMEOUT_S = 5.0


@dataclass
class HostDutSpec:
    binary: Path
    netns: str
    tap: str
    ip: str
    netmask: str = "255.255.255.0"
    mac: str = "02:00:00:00:00:02"


class HostDutProcess:
    """Starts, watches and stops one host DUT program."""

    def __init__(self, spec: HostDutSpec, workdir: Path) -> None:
        self.spec = spec
        self.workdir = workdir
        self.console_path = workdir / "console"
        self.log_path = workdir / "dut-process.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = self.spec.binary
        if not binary.is_file() or not os.access(binary, os.X_OK):
            raise BenchError(
                f"firmware image not found or not executable: {binary} (build it with firmware/tools/build-host.sh)"
            )
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.console_path.is_symlink():
            self.console_path.unlink()
        args = [
            "ip", "netns", "exec", self.spec.netns, str(binary),
            "--tap", self.spec.tap, "--ip", self.spec.ip, "--netmask", self.spec.netmask,
            "--mac", self.spec.mac, "--console", "pty", "--pty-link", str(self.console_path),
        ]  # fmt: skip
        self._proc = start_logged(args, self.log_path, "host DUT")
        deadline = time.monotonic() + CONSOLE_APPEAR_TIMEOUT_S
        while not self.console_path.exists():
            if self._proc.poll() is not None:
                raise DutError(f"DUT program exited at start (code {self._proc.returncode}): {self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise DutError(f"DUT console did not appear within {CONSOLE_APPEAR_TIMEOUT_S:.0f} s")
            time.sleep(0.02)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def exit_code(self) -> int | None:
        return self._proc.poll() if self._proc else None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = 5) -> str:
        return " | ".join(self.log_text().strip().splitlines()[-lines:])

    def stop(self, grace_s: float = 3.0) -> None:
        proc, self._proc = self._proc, None
        stop_process(proc, grace_s)
        if self.console_path.is_symlink():
            self.console_path.unlink()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
