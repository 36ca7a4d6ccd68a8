"""A real labgrid coordinator and exporter on this PC (loopback only), as a lab runs them: the
exporter serves each board's serial device over RFC 2217 (its own ser2net) and exports a network
interface and a debug probe's descriptor; one place per board matches its three. Started and
stopped by a test; state in its work directory; everything it starts is gone after stop()."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from hil.plumbing.labgrid_place import LABGRID_PYTHON
from tests.support.processes import pgrep

LABGRID_BIN = LABGRID_PYTHON.parent
EXPORTER = "bench1"


@dataclass(frozen=True)
class ExportedBoard:
    """One board of the lab: its place, its UART (a /dev/ path: labgrid's RawSerialPort), the PC's
    interface its link ends on, its probe's serial number."""

    place: str
    serial_device: str
    ifname: str
    probe_serial: str

    @property
    def group(self) -> str:
        return f"grp-{self.place}"

    @property
    def matches(self) -> list[str]:
        return [
            f"{EXPORTER}/{self.group}/{cls}" for cls in ("NetworkSerialPort", "RemoteNetworkInterface", "DebugProbe")
        ]

    def exported(self) -> str:
        return (
            f"{self.group}:\n"
            f"  RawSerialPort: {{port: '{self.serial_device}', speed: 115200}}\n"
            f"  NetworkInterface: {{ifname: '{self.ifname}'}}\n"
            # labgrid has no class for a pyOCD probe: a descriptor of the lab's own, exported as it is
            f"  probe: {{cls: DebugProbe, tool: pyocd, target: atsame70q21b, serial: '{self.probe_serial}'}}\n"
        )


def _wait_for(what: str, timeout_s: float, check: object) -> object:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()  # type: ignore[operator]
        if found:
            return found
        time.sleep(0.1)
    raise TimeoutError(f"labgrid bench: no {what} within {timeout_s:g} s")


class LabgridBench:
    def __init__(self, workdir: Path, boards: Sequence[ExportedBoard]) -> None:
        self.workdir = workdir
        self.boards = tuple(boards)
        self.address = ""
        self._procs: list[subprocess.Popen[bytes]] = []

    @property
    def place(self) -> str:
        """The first board's place (a lab of one board: its only one)."""
        return self.boards[0].place

    def client(self, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "LG_COORDINATOR": self.address, **({"LG_USERNAME": user} if user else {})}
        return subprocess.run([str(LABGRID_BIN / "labgrid-client"), *args], env=env, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip

    def holder(self, place: str | None = None) -> str | None:
        """Who holds the place (`host/user`; the first board's by default), as `labgrid-client show`
        says; None when free. A client that cannot say (no coordinator, no such place) fails the
        test: that is not "free"."""
        out = self.client("-p", place or self.place, "show")
        m = re.search(r"^\s*acquired:\s*(\S+)", out.stdout, re.MULTILINE)
        assert out.returncode == 0 and m is not None, f"labgrid-client show failed: {out.stdout}{out.stderr}"
        return None if m.group(1) == "None" else m.group(1)

    def holders(self) -> dict[str, str | None]:
        """Every board's place and who holds it."""
        return {board.place: self.holder(board.place) for board in self.boards}

    def wait_held_by(self, pid: int, timeout_s: float = 60) -> dict[str, str]:
        """Every board's place and its holder once a run of the suite with process id `pid` holds
        them all (the suite locks as `user:hil-<pid>-<start>`); an AssertionError after timeout_s."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            holders = self.holders()
            if all(h and f":hil-{pid}-" in h for h in holders.values()):
                return {place: str(h) for place, h in holders.items()}
            time.sleep(0.2)
        raise AssertionError(f"run {pid} did not lock every place within {timeout_s:g} s: {self.holders()}")

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
        (self.workdir / "exporter.yaml").write_text("".join(board.exported() for board in self.boards))
        self._start([str(LABGRID_BIN / "labgrid-exporter"), "-c", self.address, "-n", EXPORTER,
                     "--hostname", "127.0.0.1", "exporter.yaml"], "exporter.log")  # fmt: skip
        matches = [m for board in self.boards for m in board.matches]
        _wait_for("exported resources", 30, lambda: all(
            m.split("/", 1)[1] in self.client("resources").stdout for m in matches))  # fmt: skip
        for board in self.boards:
            for args in (("create",), ("add-match", *board.matches)):
                done = self.client("-p", board.place, *args)
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
        return [p for board in self.boards for p in pgrep("-af", f"ser2net.*{re.escape(board.serial_device)}")]

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
