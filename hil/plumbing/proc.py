"""Background processes of the bench: started in their own session with output to a log file,
stopped with SIGTERM and, after a grace period, SIGKILL of the whole process group."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Self

from hil.errors import BenchError
from hil.plumbing.cpu_plan import raise_session

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child before exec (Popen's preexec_fn): the kernel kills it when the suite's process
    ends, also when that is SIGKILLed."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def start_logged(
    argv: list[str],
    log_path: Path,
    what: str,
    env: dict[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> subprocess.Popen[bytes]:
    """`argv` in a session of its own (stopped as a whole) at the bench's session priority
    (hil.plumbing.cpu_plan.raise_session), its output appended to `log_path`."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                env=env,
                pass_fds=pass_fds,
            )
        except FileNotFoundError as exc:
            raise BenchError(f"{what}: program not found: {exc.filename}") from None
    raise_session(proc.pid)
    return proc


class WatchedProcess:
    """A started program with its log: whether it still runs, how it ended, what it said."""

    log_path: Path
    _proc: subprocess.Popen[bytes] | None = None

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
        return " | ".join(self.log_text().strip().splitlines()[-lines:]) or "no output"


def stop_process(proc: subprocess.Popen[bytes] | None, grace_s: float = 2.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        proc.wait()


def interrupt(proc: subprocess.Popen[bytes] | subprocess.Popen[str], grace_s: float = 5.0) -> None:
    """Ends a program the way Ctrl-C would (SIGINT: tcpdump finishes its file, ping prints its
    summary), then SIGKILL if it is still there after `grace_s`."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def kill_process(proc: subprocess.Popen[bytes] | None) -> None:
    """Ends a process group at once (SIGKILL): for a server whose output is already read (iperf 2
    takes ~0.7 s to leave after SIGTERM)."""
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


class ListeningServer:
    """A server program in a namespace: started with its output logged, ready once its port
    listens (checked with `ss`), always stopped on exit."""

    def __init__(
        self, argv: list[str], netns_prefix: list[str], port: int, udp: bool, log_path: Path, what: str
    ) -> None:
        self.argv = argv
        self.netns_prefix = netns_prefix
        self.port = port
        self.udp = udp
        self.log_path = log_path
        self.what = what
        self._proc: subprocess.Popen[bytes] | None = None
        self.finished = False  # its output has been read: it may be killed without a grace period

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout_s: float = 5.0) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.write_bytes(b"")
        self._proc = start_logged(self.argv, self.log_path, self.what)
        ss = [*self.netns_prefix, "ss", "-lun" if self.udp else "-ltn", "sport", f"= :{self.port}"]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise BenchError(f"{self.what} exited at start: {self.output().strip()[-200:]}")
            if f":{self.port}" in subprocess.run(ss, capture_output=True, text=True, check=False).stdout:
                return
            time.sleep(0.01)
        self.stop()
        raise BenchError(f"{self.what} did not listen on port {self.port} within {timeout_s:g} s")

    def output(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        return self._proc

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if self.finished:
            kill_process(proc)  # its output is read: nothing to wait for
        else:
            stop_process(proc)
