"""The host build of the test firmware run as a DUT process inside the DUT namespace.

Its console is a pseudo-terminal opened by the suite exactly as a board's USB serial port. Either
the program creates the pseudo-terminal itself and links it at a path the suite chooses, or the
bench owns it (PtySerialLine) and hands the program its device side: then, like a USB serial
adapter, the port survives the DUT being killed, restarted or flashed with another build.
"""

from __future__ import annotations

import contextlib
import os
import time
import tty
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from hil.errors import BenchError, DutError
from hil.plumbing.proc import WatchedProcess, start_logged, stop_process

CONSOLE_APPEAR_TIMEOUT_S = 5.0


@dataclass
class HostDutSpec:
    binary: Path
    netns: str
    tap: str
    ip: str
    netmask: str = "255.255.255.0"
    mac: str = "02:00:00:00:00:02"
    wifi_sim_ssid: str | None = None  # a Wi-Fi station next to a simulated AP: the address comes from `wifi connect`
    wifi_sim_psk_env: str | None = None  # the environment variable holding the simulated AP's passphrase
    # the bridge build (preset host-bridge) in the path: the taps it forwards between (`tap` is one of them)
    bridge_taps: tuple[str, str] | None = None
    # the console personality of a stock test firmware (`--personality`): test equipment printing its formats
    personality: str | None = None
    # the simulated station's radio model, driven by the virtual attenuator writing this file (--wifi-air)
    wifi_air: Path | None = None
    wifi_air_notch_db: int | None = None  # the planted bad point (--wifi-air-notch-db)
    # Wi-Fi over the link (--wifi-link): the SoftAP of a pair (`wifi ap`) or its station (`wifi connect`)
    wifi_link: bool = False

    def address_args(self) -> list[str]:
        """The address (a station: the project's firmware takes it from `wifi connect`; a stock
        personality's from the simulated AP's DHCP, which leases this one)."""
        address = ["--ip", self.ip, "--netmask", self.netmask]
        if (
            self.wifi_link
        ):  # the address comes from `wifi ap` or `wifi connect`; a personality's `ap` / `sta` use this one
            return ["--wifi-link", *(address if self.personality is not None else [])]
        if self.wifi_sim_ssid is None:
            return address
        return [*(address if self.personality is not None else []), "--wifi-sim-ssid", self.wifi_sim_ssid,
                *(["--wifi-sim-psk-env", self.wifi_sim_psk_env] if self.wifi_sim_psk_env else [])]  # fmt: skip


class PtySerialLine:
    """A pseudo-terminal owned by the bench: the DUT program gets the master side as its UART,
    the suite opens the other side at `link`."""

    def __init__(self, link: Path) -> None:
        self.link = link
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(os.ttyname(self.slave))

    def program_env(self) -> dict[str, str]:
        """Environment that makes the host firmware use this line (in, out, held slave)."""
        return {**os.environ, "HILFW_CONSOLE_FDS": f"{self.master},{self.master},{self.slave}"}

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.link.is_symlink():
            self.link.unlink()


class HostDutProcess(WatchedProcess):
    """Starts, watches and stops one host DUT program."""

    def __init__(self, spec: HostDutSpec, workdir: Path, line: PtySerialLine | None = None) -> None:
        self.spec = spec
        self.workdir = workdir
        self.line = line
        self.console_path = line.link if line else workdir / "console"
        self.log_path = workdir / "dut-process.log"
        self._proc = None

    def start(self) -> None:
        binary = self.spec.binary
        if not binary.is_file() or not os.access(binary, os.X_OK):
            raise BenchError(
                f"firmware image not found or not executable: {binary} (build it with firmware/tools/build-host.sh)"
            )
        self.workdir.mkdir(parents=True, exist_ok=True)
        args = [
            "ip", "netns", "exec", self.spec.netns, str(binary),
            "--tap", self.spec.tap, *self.spec.address_args(), "--mac", self.spec.mac,
        ]  # fmt: skip
        if self.spec.bridge_taps is not None:
            args += ["--bridge-taps", ",".join(self.spec.bridge_taps)]
        if self.spec.personality is not None:
            args += ["--personality", self.spec.personality]
        if self.spec.wifi_air is not None:
            args += ["--wifi-air", str(self.spec.wifi_air)]
        if self.spec.wifi_air_notch_db is not None:
            args += ["--wifi-air-notch-db", str(self.spec.wifi_air_notch_db)]
        if self.line is not None:
            line = self.line
            self._proc = start_logged(
                args, self.log_path, "host DUT", env=line.program_env(), pass_fds=(line.master, line.slave)
            )
            return
        if self.console_path.is_symlink():
            self.console_path.unlink()
        args += ["--console", "pty", "--pty-link", str(self.console_path)]
        self._proc = start_logged(args, self.log_path, "host DUT")
        deadline = time.monotonic() + CONSOLE_APPEAR_TIMEOUT_S
        while not self.console_path.exists():
            if self._proc.poll() is not None:
                raise DutError(f"DUT program exited at start (code {self._proc.returncode}): {self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise DutError(f"DUT console did not appear within {CONSOLE_APPEAR_TIMEOUT_S:.0f} s")
            time.sleep(0.02)

    def stop(self, grace_s: float = 3.0) -> None:
        proc, self._proc = self._proc, None
        stop_process(proc, grace_s)
        if self.line is None and self.console_path.is_symlink():
            self.console_path.unlink()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
