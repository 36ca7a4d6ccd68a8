"""DUT kind `virtual`: the project's host firmware as a process in the DUT namespace.

"Flashing" installs the selected build (built on demand) and starts it. The console is a
pseudo-terminal the bench owns, opened by pytest-embedded's serial service exactly as a USB serial
port, and like one it stays open while the DUT is killed, restarted or flashed with another build
configuration. A dead process is a DUT fault; the next test re-flashes (restarts) it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from hil.config.bench import DutConfig
from hil.errors import BenchError
from hil.host_dut import HostDutProcess, HostDutSpec, PtySerialLine
from hil.netns import TAP, VirtualTopology
from hil.paths import BUILD_HOST_SCRIPT, host_firmware


class VirtualDut:
    def __init__(self, cfg: DutConfig, topology: VirtualTopology, workdir: Path) -> None:
        self.cfg = cfg
        self.topology = topology
        self.workdir = workdir
        self.flash_count = 0
        self.current_config: str | None = None
        self._process: HostDutProcess | None = None
        self._line: PtySerialLine | None = None

    @property
    def console_port(self) -> str:
        return str(self.workdir / "console")

    @property
    def default_config(self) -> str:
        return self.cfg.firmware.config or "default"

    def image(self, config: str | None = None) -> Path:
        fw = self.cfg.firmware
        if fw.image is not None and config in (None, self.default_config):
            if not fw.image.is_file():
                raise BenchError(f"DUT {self.cfg.name}: firmware image {fw.image} does not exist")
            return fw.image
        config = config or self.default_config
        path = host_firmware(config)
        if not path.is_file():
            self._build(config)
        return path

    @staticmethod
    def _build(config: str) -> None:
        proc = subprocess.run([str(BUILD_HOST_SCRIPT), f"host-{config}"], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise BenchError(f"building firmware config {config!r} failed: {tail[0]}")

    def flash(self, config: str | None = None) -> None:
        """Installs and starts a build configuration (default: the bench file's), replacing a
        running one. The console port stays the same."""
        config = config or self.default_config
        image = self.image(config)
        self.stop_program()
        if self._line is None:
            self._line = PtySerialLine(self.workdir / "console")
        net = self.cfg.network
        spec = HostDutSpec(image, self.topology.dut_ns, TAP, net.dut_ip, mac=net.dut_mac)
        proc = HostDutProcess(spec, self.workdir, self._line)
        proc.start()
        self._process = proc
        self.current_config = config
        self.flash_count += 1

    def alive(self) -> bool:
        return self._process is not None and self._process.alive()

    def exit_code(self) -> int | None:
        return self._process.exit_code() if self._process else None

    def process_log(self) -> str:
        return self._process.log_text() if self._process else ""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def stop_program(self) -> None:
        if self._process is not None:
            self._process.stop()
            self._process = None

    def stop(self) -> None:
        """Stops the program and releases the console port (end of the session)."""
        self.stop_program()
        if self._line is not None:
            self._line.close()
            self._line = None
