"""An SSH server in a namespace of the virtual bench, standing in for a remote peer host (the
thesis's Hub): Debian's `sshd` with a host key and a client key made for this run only.

Everything it needs lives in one directory the caller owns (keys, authorized_keys, config, the
known_hosts line the client checks the host key against) and goes with it. sshd wants its
privilege-separation directory /run/sshd: it runs in a mount namespace of its own with a
private tmpfs on /run, so nothing is created on the host and nothing is left after a crash.
Logins: the running user, by the run's key only (no passwords, no agent or X11 forwarding).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from hil.errors import BenchError
from hil.plumbing.proc import ListeningServer

SSHD = "/usr/sbin/sshd"
SSHD_PACKAGE = "Debian package `openssh-server`"
SESSION_END_S = 3.0  # how long sshd's per-connection processes may take to end after the server stopped


@dataclass(frozen=True)
class SshdKeys:
    """What a client needs to log in to the virtual sshd."""

    identity_file: Path
    known_hosts: Path


def make_key(path: Path, comment: str) -> None:
    """An ed25519 key pair without passphrase at `path` (+ .pub)."""
    try:
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                       check=True, capture_output=True, text=True, timeout=30)  # fmt: skip
    except FileNotFoundError:
        raise BenchError("ssh-keygen is not installed (Debian package `openssh-client`)") from None
    except subprocess.CalledProcessError as exc:
        raise BenchError(f"ssh-keygen failed: {exc.stderr.strip()}") from None


def sshd_config(workdir: Path, listen: str, port: int) -> str:
    return "\n".join([
        f"ListenAddress {listen}:{port}",
        f"HostKey {workdir / 'host_key'}",
        f"AuthorizedKeysFile {workdir / 'authorized_keys'}",
        "AuthenticationMethods publickey",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password",
        "StrictModes no",  # the run's directory sits under /tmp
        "UsePAM no",
        "PidFile none",
        "PrintMotd no",
        "AllowAgentForwarding no",
        "AllowTcpForwarding no",
        "X11Forwarding no",
        "MaxSessions 64",  # every program the suite runs on the peer is one session of one connection
        "MaxStartups 64",
        "",
    ])  # fmt: skip


class VirtualSshd:
    """sshd listening on `listen`:`port` inside the namespace `netns_prefix` runs in; keys and
    configuration in `workdir` (created empty, removed on exit), its log beside it (`log_path`,
    kept: evidence, no secret in it); always stopped on exit."""

    def __init__(self, netns_prefix: list[str], listen: str, workdir: Path, port: int = 22) -> None:
        self.netns_prefix = netns_prefix
        self.listen = listen
        self.port = port
        # absolute: sshd reads its host key again in every connection's re-executed child, where a
        # relative path no longer resolves (the connection is reset before the key exchange)
        self.workdir = workdir.resolve()
        self._server: ListeningServer | None = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def log_path(self) -> Path:
        return self.workdir.with_name(self.workdir.name + ".log")

    def log_tail(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return "no log"
        return " | ".join(text.strip().splitlines()[-lines:]) or "nothing logged"

    @property
    def keys(self) -> SshdKeys:
        return SshdKeys(self.workdir / "client_key", self.workdir / "known_hosts")

    def start(self) -> None:
        if not Path(SSHD).exists():
            raise BenchError(f"{SSHD} is not installed ({SSHD_PACKAGE}): the SSH peer of the virtual bench needs it")
        self.workdir.mkdir(parents=True, exist_ok=False)
        self.workdir.chmod(0o700)
        try:
            make_key(self.workdir / "host_key", "hil virtual peer host key")
            make_key(self.workdir / "client_key", "hil virtual bench client key")
            shutil.copyfile(self.workdir / "client_key.pub", self.workdir / "authorized_keys")
            host_pub = (self.workdir / "host_key.pub").read_text().split()
            host_entry = f"[{self.listen}]:{self.port}" if self.port != 22 else self.listen
            (self.workdir / "known_hosts").write_text(f"{host_entry} {host_pub[0]} {host_pub[1]}\n")
            config = self.workdir / "sshd_config"
            config.write_text(sshd_config(self.workdir, self.listen, self.port))
            # a private /run for sshd's privilege-separation directory: nothing on the host changes
            script = f'mount -t tmpfs -o mode=755 hil-sshd /run && mkdir -m 755 /run/sshd && exec {SSHD} -D -e -f "$1"'
            argv = [*self.netns_prefix, "unshare", "--mount", "sh", "-c", script, "sh", str(config)]
            self._server = ListeningServer(argv, self.netns_prefix, self.port, False,
                                           self.log_path, f"sshd ({SSHD_PACKAGE})")  # fmt: skip
            self._server.start(timeout_s=10.0)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()
            self._sessions_gone()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def _sessions_gone(self) -> None:
        """Waits for sshd's per-connection processes (each in a session of its own, so the server's
        stop does not reach them) to end after their connection closed; kills what is left after
        SESSION_END_S. A clean-clone run found one still ending when the namespace was checked."""
        ns = self.netns_prefix[3] if self.netns_prefix[:3] == ["ip", "netns", "exec"] else None
        if ns is None:
            return
        deadline = time.monotonic() + SESSION_END_S
        while True:
            out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=False)
            left = [int(p) for p in out.stdout.split() if _comm(int(p)) == "sshd"]
            if not left or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""
