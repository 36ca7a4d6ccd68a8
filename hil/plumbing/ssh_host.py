"""A remote host of the bench reached over SSH (the thesis's Hub): one master connection, opened
from where the PC side runs, that every program the suite runs on the host goes through.

`prefix` is an argv prefix like `ip netns exec NS`: ``[*prefix, "iperf3", "-s", ...]`` runs iperf 3
on the remote host (hil.plumbing.ssh_exec quotes the arguments and gives the session a terminal, so
the remote program ends when the local one is stopped). Host keys are always checked (no
trust-on-first-use); BatchMode: a missing key or a changed host key is one error at start, never
a password prompt. The key's path may be logged, the key never is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from hil.errors import BenchError
from hil.plumbing.netns import pid_alive
from hil.plumbing.proc import start_logged, stop_process

SSH_EXEC = Path(__file__).with_name("ssh_exec.py")
CONTROL_DIR_PREFIX = "hil-ssh-"  # + "<pid>-": a crashed run's directory is found by its pid
_OPEN: set[SshHost] = set()  # the run's open connections (the last-resort cleanup closes them)
RETRY_S = 0.5
# what a host that is still starting (or a link still coming up) answers; a refused key or a
# changed host key is not among them: those fail at once
_TRANSIENT = ("Connection refused", "Connection reset", "Connection closed", "Connection timed out",
              "No route to host", "kex_exchange_identification", "Network is unreachable")  # fmt: skip


def transient(reason: str) -> bool:
    """Whether ssh's reason for failing may pass by itself (worth another attempt)."""
    return any(t in reason for t in _TRANSIENT)


@dataclass(frozen=True)
class SshTarget:
    host: str
    user: str = "root"
    port: int = 22
    identity_file: Path | None = None  # None: ssh's own keys
    known_hosts: Path | None = None  # None: ssh's default file
    connect_timeout_s: float = 10.0

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.host}"

    def describe(self) -> str:
        port = f":{self.port}" if self.port != 22 else ""
        return f"{self.destination}{port}"

    def options(self, control_path: Path) -> list[str]:
        opts = [
            "-p", str(self.port),
            "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=yes",
            "-o", f"ConnectTimeout={max(1, round(self.connect_timeout_s))}",
            "-o", "ServerAliveInterval=5",
            "-o", "ServerAliveCountMax=3",
            "-o", f"ControlPath={control_path}",
            "-o", "ForwardAgent=no",
            "-o", "ForwardX11=no",
            "-o", "LogLevel=ERROR",  # errors only: no "Connection closed" in a program's output
        ]  # fmt: skip
        if self.identity_file is not None:
            opts += ["-i", str(self.identity_file), "-o", "IdentitiesOnly=yes"]
        if self.known_hosts is not None:
            opts += ["-o", f"UserKnownHostsFile={self.known_hosts}", "-o", "GlobalKnownHostsFile=/dev/null"]
        return opts


class SshHost:
    """An SSH master connection to `target`, run with `local_prefix` (the PC side's namespace, so
    it leaves through the PC's network); open on enter, closed on exit."""

    def __init__(self, target: SshTarget, local_prefix: list[str], log_path: Path) -> None:
        self.target = target
        self.local_prefix = local_prefix
        self.log_path = log_path
        self._dir: Path | None = None
        self._master: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def control_path(self) -> Path:
        if self._dir is None:
            raise BenchError("the SSH connection is not open")
        return self._dir / "ctl"

    @property
    def prefix(self) -> list[str]:
        """Runs a program on the remote host: ``[*prefix, program, *args]``."""
        return [*self.local_prefix, sys.executable, str(SSH_EXEC), *self._opts(), self.target.destination, "--"]

    def _opts(self) -> list[str]:
        return self.target.options(self.control_path)

    def open(self) -> None:
        """Starts the master connection and waits until it is up; a BenchError with ssh's own
        message (no route, refused, key or host key rejected) when it cannot connect."""
        # a short path of its own: a unix socket's path has at most 107 bytes
        self._dir = Path(tempfile.mkdtemp(prefix=f"{CONTROL_DIR_PREFIX}{os.getpid()}-", dir="/tmp"))
        argv = [*self.local_prefix, "ssh", *self._opts(), "-M", "-N", "-o", "ControlPersist=no",
                self.target.destination]  # fmt: skip
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.write_bytes(b"")
        self._master = start_logged(argv, self.log_path, "ssh (Debian package `openssh-client`)")
        deadline = time.monotonic() + self.target.connect_timeout_s + 5
        check = [*self.local_prefix, "ssh", *self._opts(), "-O", "check", self.target.destination]
        _OPEN.add(self)
        try:
            while time.monotonic() < deadline:
                if self._master.poll() is not None:
                    said = ssh_reason(self.log_path.read_text(errors="replace")) or f"exit {self._master.returncode}"
                    if not transient(said) or time.monotonic() + RETRY_S >= deadline:
                        raise BenchError(f"SSH to the peer {self.target.describe()} failed: {said}")
                    time.sleep(RETRY_S)  # a host still starting its sshd, a link still coming up: again
                    self._master = start_logged(argv, self.log_path, "ssh (Debian package `openssh-client`)")
                    continue
                if subprocess.run(check, capture_output=True, timeout=10, check=False).returncode == 0:
                    return
                time.sleep(0.1)
            raise BenchError(
                f"SSH to the peer {self.target.describe()} not up within {self.target.connect_timeout_s:g} s"
            )
        except BaseException:  # also Ctrl-C while it connects: nothing of it stays
            self.close()
            raise

    def alive(self) -> bool:
        return self._master is not None and self._master.poll() is None

    def close(self) -> None:
        _OPEN.discard(self)
        master, self._master = self._master, None
        if master is not None and master.poll() is None:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                exit_ = [*self.local_prefix, "ssh", *self._opts(), "-O", "exit", self.target.destination]
                subprocess.run(exit_, capture_output=True, timeout=5, check=False)
            stop_process(master)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def kill_open_connections() -> int:
    """Ends every master connection of this run at once (the last-resort cleanup after an
    interrupt whose teardown blocked): their sessions close, and with them the remote programs."""
    hosts = list(_OPEN)
    for host in hosts:
        master, host._master = host._master, None
        if master is not None and master.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(master.pid, signal.SIGKILL)
        if host._dir is not None:
            shutil.rmtree(host._dir, ignore_errors=True)
        _OPEN.discard(host)
    return len(hosts)


def ssh_reason(output: str) -> str:
    """ssh's reason for failing, in a line or two (its host-key warning banner left out; the
    whole text stays in the master's log)."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not ln.startswith("@")]
    return " ".join(dict.fromkeys(lines[-2:]))  # a retried attempt's same words once


def cleanup_stale_control_dirs() -> list[Path]:
    """Removes the control directories of runs whose process is gone (a crashed run's)."""
    removed = []
    for d in Path("/tmp").glob(f"{CONTROL_DIR_PREFIX}*"):
        pid_text = d.name.removeprefix(CONTROL_DIR_PREFIX).split("-", 1)[0]
        if not pid_text.isdigit() or pid_alive(int(pid_text)):
            continue  # not ours, or its run is still going
        shutil.rmtree(d, ignore_errors=True)
        removed.append(d)
    return removed
