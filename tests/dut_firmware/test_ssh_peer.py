"""A peer host reached over SSH (hil.plumbing.ssh_host, hil.plumbing.peer_host) on the virtual bench:
an sshd in the peer namespace with keys made by the test, on a management link beside the DUT.

The suite runs every program on the peer through an argv prefix, so what matters is that the
prefix behaves like a local program: arguments arrive exactly as given, stdin and stdout pass
through unaltered, the exit code comes back, and a remote program ends when the local one is
stopped (no server outlives the run). A wrong key or a missing tool is one error at start. Each
test removes everything it made.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hil.config.sections import PeerConfig, SshConfig
from hil.errors import BenchError
from hil.plumbing.in_path import InPathConfig, InPathMode, InPathTopology
from hil.plumbing.peer_host import PeerHost, probe, virtual_peer
from hil.plumbing.ssh_host import CONTROL_DIR_PREFIX, SshHost, SshTarget
from hil.plumbing.virtual_sshd import VirtualSshd, make_key

pytestmark = pytest.mark.virtual_bench

MGMT = ("169.254.77.1", "169.254.77.2")
ADDRESSES = InPathConfig(pc_ip="10.78.0.1", dut_ip="10.78.0.2", peer_ip="10.78.0.3")


def run(prefix: list[str], *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, *argv], input=stdin, capture_output=True, text=True, timeout=30, check=False)


@pytest.fixture
def topology() -> Iterator[InPathTopology]:
    """The black-box topology with a Linux bridge between the ports: the peer is reachable on its
    data address through the DUT and on its management address beside it."""
    with InPathTopology(InPathMode.BLACK_BOX, ADDRESSES, pc_shaping=None, management=MGMT) as topo:
        topo.run_in_dut('ip link add br0 type bridge && ip link set "$1" master br0 && '
                        'ip link set "$2" master br0 && ip link set br0 up')  # fmt: skip
        yield topo


@pytest.fixture
def peer(topology: InPathTopology, tmp_path: Path) -> Iterator[PeerHost]:
    with virtual_peer(topology, PeerConfig(ip=ADDRESSES.peer_ip, ssh=SshConfig(host=MGMT[1])), tmp_path) as p:
        yield p


def test_a_program_on_the_peer_gets_its_arguments_and_stdin_and_returns_its_exit_code(peer: PeerHost) -> None:
    awkward = ["( sport = :5201 )", "it's", '"quoted"', "$HOME", "a;b", "", "tab\there", "*"]
    script = 'for a in "$@"; do printf "<%s>\\n" "$a"; done; head -n 2; exit 7'
    out = run(peer.prefix, "sh", "-c", script, "sh", *awkward, stdin="line one\nline two\n")
    # stdin's lines reach the program (its end does not: a terminal), without a newline
    # translation or an echo of them
    assert out.stdout == "".join(f"<{a}>\n" for a in awkward) + "line one\nline two\n"
    assert out.returncode == 7


def test_the_peer_program_runs_in_the_peer_namespace_over_the_management_link(
    peer: PeerHost, topology: InPathTopology
) -> None:
    addresses = run(peer.prefix, "ip", "-brief", "-4", "addr").stdout
    assert ADDRESSES.peer_ip in addresses and MGMT[1] in addresses
    assert peer.facts["python_ok"] == "1" and peer.facts["iperf3"].startswith("iperf 3")
    assert "over SSH root@169.254.77.2" in peer.describe()
    # the SSH session uses the management link, not the measured path through the DUT
    who = run(peer.prefix, "sh", "-c", 'echo "$SSH_CONNECTION"').stdout.split()
    assert who[0] == MGMT[0] and who[2] == MGMT[1]


def argv_of(pid: int) -> list[str] | None:
    """The argv of process `pid` (None: gone; [] a zombie: it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except (FileNotFoundError, ProcessLookupError):
        return None


def test_a_remote_program_ends_when_its_local_side_is_stopped(
    peer: PeerHost, topology: InPathTopology, tmp_path: Path
) -> None:
    # The remote program is a sleep whose duration nothing else asks for, started by a shell that
    # writes its own pid first and then becomes the sleep (exec keeps the pid): the pid in the file
    # is the program's, and its argv is exactly ["sleep", duration] (the shells that lead to it,
    # whose command lines name the duration too, never match). Plain POSIX sh: /bin/sh may be dash,
    # which has no `exec -a`. The peer shares this machine's /proc (a network namespace only).
    duration = f"{3000 + os.getpid() % 1000}.{time.monotonic_ns() % 997 + 1}"
    pid_file = tmp_path / "remote.pid"
    script = 'echo $$ > "$1" && exec sleep "$2"'
    argv = [*peer.prefix, "sh", "-c", script, "sh", str(pid_file), duration]
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    local = subprocess.Popen(argv, start_new_session=True, **quiet)  # type: ignore[call-overload]
    program = ["sleep", duration]
    pid = 0
    try:
        deadline = time.monotonic() + 10
        while not (pid and argv_of(pid) == program):
            ended = local.poll()  # the SSH side ended: the remote program never ran, or ran and ended
            assert ended is None and time.monotonic() < deadline, (
                f"the remote program never started (pid file: {pid or 'none'}, SSH side's exit code: {ended})"
            )
            time.sleep(0.1)
            text = pid_file.read_text().strip() if pid_file.exists() else ""
            pid = int(text) if text.isdigit() else 0
        # it is the peer's: it runs in the peer namespace, reached over SSH
        peer_net = os.stat(f"/run/netns/{topology.peer_ns}").st_ino
        assert os.stat(f"/proc/{pid}/ns/net").st_ino == peer_net, "the remote program runs outside the peer"
        assert local.poll() is None and argv_of(pid) == program, "the remote program ended before it was stopped"
        os.killpg(local.pid, signal.SIGKILL)  # as a crashed run: no chance to say goodbye
        local.wait()
        deadline = time.monotonic() + 10
        while argv_of(pid) == program:  # gone, or a zombie (ended, not yet reaped)
            assert time.monotonic() < deadline, "the remote program outlived its SSH session"
            time.sleep(0.1)
    finally:
        if local.poll() is None:
            os.killpg(local.pid, signal.SIGKILL)
            local.wait()
        if pid and argv_of(pid) == program:  # a failed test leaves no sleep behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_everything_of_the_ssh_peer_is_gone_afterwards(topology: InPathTopology, tmp_path: Path) -> None:
    before = set(Path("/tmp").glob(f"{CONTROL_DIR_PREFIX}{os.getpid()}-*"))
    with virtual_peer(topology, PeerConfig(ip=ADDRESSES.peer_ip, ssh=SshConfig(host=MGMT[1])), tmp_path) as p:
        assert run(p.prefix, "true").returncode == 0
        # where the control directory and the keys are while it runs: what is looked for below
        assert set(Path("/tmp").glob(f"{CONTROL_DIR_PREFIX}{os.getpid()}-*")) - before
        assert (tmp_path / "sshd" / "client_key").is_file()
    assert set(Path("/tmp").glob(f"{CONTROL_DIR_PREFIX}{os.getpid()}-*")) == before
    assert not (tmp_path / "sshd").exists()  # keys and configuration
    # what stays (the master's and sshd's logs) holds no key
    kept = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert kept and not [f for f in kept if "PRIVATE KEY" in f.read_text(errors="replace")]
    listed = [run(["ip", "netns", "pids", ns]) for ns in (topology.peer_ns, topology.pc_ns)]
    assert all(out.returncode == 0 for out in listed), [out.stderr for out in listed]  # not "none" for a failure
    left = [pid for out in listed for pid in out.stdout.split()]
    assert left == [], "the sshd or the SSH master is still running"


def test_a_key_the_peer_does_not_know_is_one_error_at_start(topology: InPathTopology, tmp_path: Path) -> None:
    with VirtualSshd(topology.exec_prefix(topology.peer_ns), MGMT[1], tmp_path / "sshd") as sshd:
        make_key(tmp_path / "stranger", "a key the peer never saw")
        target = SshTarget(MGMT[1], identity_file=tmp_path / "stranger", known_hosts=sshd.keys.known_hosts)
        with pytest.raises(BenchError, match=r"SSH to the peer root@169\.254\.77\.2 failed: .*Permission denied"):
            SshHost(target, topology.exec_prefix(topology.pc_ns), tmp_path / "master.log").open()
        # a host key that is not the one on record: refused, never trusted on first use
        (tmp_path / "other_hosts").write_text(
            f"{MGMT[1]} " + " ".join((tmp_path / "stranger.pub").read_text().split()[:2])
        )
        target = SshTarget(MGMT[1], identity_file=sshd.keys.identity_file, known_hosts=tmp_path / "other_hosts")
        with pytest.raises(BenchError, match=r"failed: .*[Hh]ost key"):
            SshHost(target, topology.exec_prefix(topology.pc_ns), tmp_path / "master.log").open()
    assert list(Path("/tmp").glob(f"{CONTROL_DIR_PREFIX}{os.getpid()}-*")) == []


def test_a_peer_without_a_tool_is_named_at_start(peer: PeerHost) -> None:
    with pytest.raises(BenchError, match=r"lacks no-such-python"):
        probe(peer.prefix, "no-such-python", "the test's peer")


def test_a_peer_whose_sshd_is_still_starting_is_waited_for(topology: InPathTopology, tmp_path: Path) -> None:
    """A Hub still booting refuses the first connection: the suite tries again within its timeout."""
    sshd = VirtualSshd(topology.exec_prefix(topology.peer_ns), MGMT[1], tmp_path / "sshd")
    starter = threading.Timer(1.5, sshd.start)  # keys and config are made when it starts
    keys = sshd.keys  # their paths are known before
    starter.start()
    try:
        target = SshTarget(MGMT[1], identity_file=keys.identity_file, known_hosts=keys.known_hosts)
        began = time.monotonic()
        with SshHost(target, topology.exec_prefix(topology.pc_ns), tmp_path / "master.log") as host:
            assert run(host.prefix, "true").returncode == 0
        assert time.monotonic() - began >= 1.5
        assert "Connection refused" in (tmp_path / "master.log").read_text()  # it was refused first
    finally:
        starter.join()
        sshd.stop()


def test_a_relative_results_directory_works(
    topology: InPathTopology, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--results-dir results/bridge` (relative, as ./suite gives it): sshd re-reads its host key in
    every connection's child, where a relative path no longer resolves."""
    monkeypatch.chdir(tmp_path)
    with virtual_peer(topology, PeerConfig(ip=ADDRESSES.peer_ip, ssh=SshConfig(host=MGMT[1])), Path("rel")) as p:
        assert run(p.prefix, "true").returncode == 0
