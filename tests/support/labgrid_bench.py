"""A real labgrid coordinator and exporter on this PC (loopback only), as a lab runs them: the
exporter serves a serial device over RFC 2217 (its own ser2net) and exports a network interface
and a debug probe's descriptor; one place matches the three. Started and stopped by a test; state
in its work directory; everything it starts is gone after stop()."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Self

from hil.plumbing.labgrid_place import LABGRID_PYTHON
from tests.support.processes import pgrep

LABGRID_BIN = LABGRID_PYTHON.parent
EXPORTER = "bench1"
GROUP = "dut1"
MATCHES = [f"{EXPORTER}/{GROUP}/NetworkSerialPort", f"{EXPORTER}/{GROUP}/RemoteNetworkInterface",
           f"{EXPORTER}/{GROUP}/DebugProbe"]  # fmt: skip


def _wait_for(what: str, timeout_s: float, check: object) -> object:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()  # type: ignore[operator]
        if found:
            return found
        time.sleep(0.1)
    raise TimeoutError(f"labgrid bench: no {what} within {timeout_s:g} s")


class LabgridBench:
    def __init__(self, workdir: Path, serial_device: str, ifname: str, place: str, probe_serial: str) -> None:
        self.workdir = workdir
        self.serial_device = serial_device  # a /dev/ path (labgrid's RawSerialPort)
        self.ifname = ifname
        self.place = place
        self.probe_serial = probe_serial
        self.address = ""
        self._procs: list[subprocess.Popen[bytes]] = []

    def client(self, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "LG_COORDINATOR": self.address, **({"LG_USERNAME": user} if user else {})}
        return subprocess.run([str(LABGRID_BIN / "labgrid-client"), *args], env=env, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip

    def holder(self) -> str | None:
        """Who holds the place (`host/user`), as `labgrid-client show` says; None when free. A
        client that cannot say (no coordinator, no such place) fails the test: that is not "free"."""
        out = self.client("-p", self.place, "show")
        m = re.search(r"^\s*acquired:\s*(\S+)", out.stdout, re.MULTILINE)
        assert out.returncode == 0 and m is not None, f"labgrid-client show failed: {out.stdout}{out.stderr}"
        return None if m.group(1) == "None" else m.group(1)

    def _start(self, argv: list[str], log: str) -> subprocess.Popen[bytes]:
        # own process group: ser2net, which the exporter starts, goes with it
        with (self.workdir / log).open("wb") as out:
            proc = subprocess.Popen(
                argv, cwd=self.workdir, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._procs.append(proc)
        return proc

    def start(self) -> Self:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._start([str(LABGRID_BIN / "labgrid-coordinator"), "-l", "127.0.0.1:0"], "coordinator.log")
        port = _wait_for("coordinator", 20, lambda: re.search(
            r"listening on 127\.0\.0\.1:(\d+)", (self.workdir / "coordinator.log").read_text()))  # fmt: skip
        self.address = f"127.0.0.1:{port.group(1)}"  # type: ignore[union-attr]
        (self.workdir / "exporter.yaml").write_text(
            f"{GROUP}:\n"
            f"  RawSerialPort: {{port: '{self.serial_device}', speed: 115200}}\n"
            f"  NetworkInterface: {{ifname: '{self.ifname}'}}\n"
            # labgrid has no class for a pyOCD probe: a descriptor of the lab's own, exported as it is
            f"  probe: {{cls: DebugProbe, tool: pyocd, target: atsame70q21b, serial: '{self.probe_serial}'}}\n"
        )
        self._start([str(LABGRID_BIN / "labgrid-exporter"), "-c", self.address, "-n", EXPORTER,
                     "--hostname", "127.0.0.1", "exporter.yaml"], "exporter.log")  # fmt: skip
        _wait_for("exported resources", 30, lambda: all(
            m.split("/")[-1] in self.client("resources").stdout for m in MATCHES))  # fmt: skip
        for args in (("create",), ("add-match", *MATCHES)):
            done = self.client("-p", self.place, *args)
            assert done.returncode == 0, done.stderr
        return self

    def stop(self) -> None:
        """The exporter first (it stops its ser2net), then the coordinator; anything left in their
        process groups is killed."""
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(15)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        self._procs.clear()

    def ser2net_processes(self) -> list[str]:
        return pgrep("-af", f"ser2net.*{re.escape(self.serial_device)}")

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
