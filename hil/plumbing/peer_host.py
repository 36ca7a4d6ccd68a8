"""The peer host of a DUT in the path (the thesis's Hub): where it is, how the suite runs
programs on it, and what it has.

On the virtual bench the peer is a network namespace the bench creates; the bench file's
`peer.ssh` makes the suite reach it over SSH as it would a remote Linux host (an sshd in that
namespace with the run's throwaway keys, on a management link beside the DUT). On a real bench
it is a second NIC of the PC in the engineer's namespace (`peer.netns`) or a remote host
(`peer.ssh`, with its own keys and known hosts). Either way the peer is an argv prefix
(``ip netns exec NS`` or hil.plumbing.ssh_exec) and the checks at start are
the same: the host answers, iperf 3, ping and Python are there, and their versions go into the
report's environment.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hil.config.sections import PeerConfig
from hil.errors import BenchError
from hil.plumbing.hardware_link import HardwareLink
from hil.plumbing.in_path import InPathTopology
from hil.plumbing.ssh_host import SshHost, SshTarget, cleanup_stale_control_dirs
from hil.plumbing.virtual_sshd import VirtualSshd

MIN_PYTHON = (3, 8)  # the stream peer's own source runs on the peer host's Python

# key=value lines; a missing tool is named, never guessed
_PROBE = """
for tool in iperf3 ping "$1"; do command -v "$tool" >/dev/null 2>&1 || echo "missing=$tool"; done
echo "iperf3=$(iperf3 --version 2>/dev/null | head -n 1)"
echo "python=$("$1" --version 2>&1)"
"$1" -c 'import sys; print("python_ok=%d" % (sys.version_info >= {min_python}))' 2>/dev/null
echo "kernel=$(uname -sr)"
echo "hostname=$(uname -n)"
"""


@dataclass
class PeerHost:
    """The peer as the suite drives it."""

    ip: str  # where the traffic goes (through the DUT)
    prefix: list[str]  # runs a program on it
    python: str  # its Python (the stream peer)
    access: str  # how it is reached, for the report
    facts: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        f = self.facts
        return (f"{self.ip}, {self.access}; host {f.get('hostname', '?')}, {f.get('kernel', '?')}, "
                f"{f.get('iperf3', '?')}, {f.get('python', '?')}")  # fmt: skip


def probe(prefix: list[str], python: str, where: str) -> dict[str, str]:
    """Runs the start-up check on the peer; a BenchError naming what is missing."""
    script = _PROBE.format(min_python=MIN_PYTHON)
    argv = [*prefix, "sh", "-c", script, "sh", python]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except subprocess.TimeoutExpired:
        raise BenchError(f"the peer ({where}) did not answer its start-up check within 30 s") from None
    facts: dict[str, str] = {}
    missing = []
    for line in (out.stdout + out.stderr).splitlines():
        key, sep, value = line.strip().partition("=")
        if not sep:
            continue
        if key == "missing":
            missing.append(value)
        else:
            facts[key] = value
    if "kernel" not in facts:
        said = (out.stdout + out.stderr).strip()[-300:] or f"exit code {out.returncode}"
        raise BenchError(f"the peer ({where}) did not run its start-up check: {said}")
    if missing:
        raise BenchError(f"the peer ({where}) lacks {', '.join(missing)} (it runs iperf 3, ping and the stream peer)")
    if facts.get("python_ok") != "1":
        need = ".".join(map(str, MIN_PYTHON))
        raise BenchError(f"the peer ({where}) has {facts.get('python')}: the stream peer needs Python >= {need}")
    return facts


def namespace_peer(ip: str, prefix: list[str], access: str) -> PeerHost:
    """A peer in a namespace of the bench PC: its programs run there, with the suite's Python."""
    return PeerHost(ip, prefix, sys.executable, access, probe(prefix, sys.executable, access))


@contextlib.contextmanager
def ssh_peer(ip: str, target: SshTarget, local_prefix: list[str], python: str, workdir: Path,
             access: str) -> Iterator[PeerHost]:  # fmt: skip
    """A peer over SSH, its master connection leaving from `local_prefix` (the PC side)."""
    cleanup_stale_control_dirs()
    with SshHost(target, local_prefix, workdir / "ssh-master.log") as host:
        yield PeerHost(ip, host.prefix, python, access, probe(host.prefix, python, f"SSH {target.describe()}"))


@contextlib.contextmanager
def virtual_peer(topology: InPathTopology, peer: PeerConfig, workdir: Path) -> Iterator[PeerHost]:
    """The virtual bench's peer namespace, driven directly or (peer.ssh) over SSH."""
    if peer.ssh is None:
        yield namespace_peer(peer.ip, topology.exec_prefix(topology.peer_ns),
                             f"namespace {topology.peer_ns} (a second NIC of the bench PC)")  # fmt: skip
        return
    ssh = peer.ssh
    with VirtualSshd(topology.exec_prefix(topology.peer_ns), ssh.host, workdir / "sshd", ssh.port) as sshd:
        keys = sshd.keys
        target = SshTarget(ssh.host, ssh.user, ssh.port, keys.identity_file, keys.known_hosts, ssh.connect_timeout_s)
        access = (f"over SSH {target.describe()} (sshd in namespace {topology.peer_ns}, "
                  "a key made for this run, management link beside the DUT)")  # fmt: skip
        with contextlib.ExitStack() as stack:
            pc_ns = topology.exec_prefix(topology.pc_ns)
            try:
                host = stack.enter_context(ssh_peer(peer.ip, target, pc_ns, ssh.python, workdir, access))
            except BenchError as exc:  # the server's side of it too
                raise BenchError(f"{exc} (sshd: {sshd.log_tail()})") from None
            yield host


@contextlib.contextmanager
def real_peer(link: HardwareLink, peer: PeerConfig, workdir: Path) -> Iterator[PeerHost]:
    """A real bench's peer: the PC's second NIC in its namespace, or a remote host over SSH (the
    SSH session leaves from the PC side's namespace)."""
    if peer.ssh is None:
        if peer.netns is None:
            raise BenchError("the peer needs peer.netns or peer.ssh")
        yield namespace_peer(
            peer.ip, link.exec_prefix(peer.netns), f"namespace {peer.netns} of the bench PC (its second NIC)"
        )
        return
    ssh = peer.ssh
    target = SshTarget(ssh.host, ssh.user, ssh.port, ssh.identity_file, ssh.known_hosts, ssh.connect_timeout_s)
    with ssh_peer(
        peer.ip, target, link.exec_prefix(link.pc_ns), ssh.python, workdir, f"over SSH {target.describe()}"
    ) as host:
        yield host
