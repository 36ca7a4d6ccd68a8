"""The host firmware's bridge build *in the path* (hil.plumbing.in_path): PC namespace <-> the
firmware bridging tap0 <-> tap1 with lwIP's bridgeif <-> peer namespace, on one subnet.

Every frame between the PC and the peer crosses the firmware: it must forward every one it
receives, drop none, still answer on its console and at its own (management) address, count the
frames per port, and stop forwarding when it dies. Its rate against 100BASE-TX line rate is the
in-path matrix's gate (`bench/bridge.yaml`, thresholds/bridge-virtual.yaml, with the test command's
bench-fault rules): the bridge runs on the bench PC, whose load sets its rate. The same topology
in black-box mode forwards through whatever the user puts between the ports (here a Linux
bridge). Each test removes everything.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hil.console.protocol import FinalLine
from hil.console.serial_console import SerialConsole
from hil.errors import BenchError
from hil.paths import host_firmware
from hil.plumbing.host_dut import HostDutProcess, HostDutSpec
from hil.plumbing.in_path import InPathConfig, InPathMode, InPathTopology
from hil.plumbing.netns import NETNS_PREFIX, list_namespaces
from hil.plumbing.proc import ListeningServer
from hil.tools.iperf2 import Iperf2Server
from hil.tools.iperf3 import IPERF3, Iperf3ClientArgs, Iperf3Result, parse_json
from hil.tools.ping import ping_argv
from tests.support.processes import wait_until_inside

pytestmark = pytest.mark.virtual_bench

BOOT_TIMEOUT_S = 10.0
LINE_RATE_GOODPUT_MBPS = 94.93  # TCP goodput of 100BASE-TX: 1460/1538 x 100 Mbit/s
# a working bridge's floor, not a line-rate gate: CI measured 72.55 then 89.83 Mbit/s PC -> peer and
# 88.31 then 58.05 peer -> PC on a loaded host, every frame forwarded and none dropped
WORKING_SHARE = 0.5
IPERF_TIME_S = 5
IPERF_OMIT_S = 1  # slow start left out of the sums (iperf3 -O)
IPERF_PORT = 5201
PINGS = 5


@dataclass
class BridgeDut:
    topology: InPathTopology
    process: HostDutProcess
    console: SerialConsole
    identity: FinalLine


def own_namespaces() -> set[str]:
    prefix = f"{NETNS_PREFIX}{os.getpid()}-"
    return {ns for ns in list_namespaces() if ns.startswith(prefix)}


def ping(topo: InPathTopology, ns: str, target: str, count: int = PINGS) -> subprocess.CompletedProcess[str]:
    argv = ping_argv(topo.exec_prefix(ns), target, count=count)
    return subprocess.run(argv, capture_output=True, text=True, timeout=count * 2 + 10, check=False)


def stats(dut: BridgeDut) -> FinalLine:
    return dut.console.run_ok("stats", timeout_s=5)


@pytest.fixture
def bridge_dut(tmp_path: Path) -> Iterator[BridgeDut]:
    """The bridge build running in the DUT namespace of a firmware-mode in-path topology whose PC
    link is shaped to 100BASE-TX; stopped and removed after the test."""
    with InPathTopology(mode=InPathMode.FIRMWARE) as topo:
        c = topo.config
        spec = HostDutSpec(
            binary=host_firmware("bridge"), netns=topo.dut_ns, tap=topo.taps[0], ip=c.dut_ip,
            netmask=c.netmask, mac=c.dut_mac, bridge_taps=topo.taps,
        )  # fmt: skip
        process = HostDutProcess(spec, tmp_path / "dut")
        process.start()
        console = SerialConsole(str(process.console_path))
        try:
            console.open()
            identity = console.identify(BOOT_TIMEOUT_S)
            yield BridgeDut(topo, process, console, identity)
        finally:
            console.close()
            process.stop()


def test_bridge_answers_and_forwards_ping_on_both_ports(bridge_dut: BridgeDut) -> None:
    dut, topo, c = bridge_dut, bridge_dut.topology, bridge_dut.topology.config
    f = dut.identity.fields
    assert f["role"] == "bridge" and f["variant"] == "bridge" and f["bridge_ports"] == "2", f
    assert f["ip"] == c.dut_ip and int(f["tcp_mss"]) == 1460  # the bring-up's fields are all there
    dut.console.run_ok("stats reset")

    through = ping(topo, topo.pc_ns, c.peer_ip)
    assert through.returncode == 0, f"PC -> peer through the bridge: {through.stdout[-300:]}"
    s = stats(dut)
    print(" ".join(f"{k}={v}" for k, v in s.fields.items() if k.startswith(("port", "bridge"))))
    for port in (0, 1):  # each echo request and reply in on one port, out of the other
        assert s.get_int(f"port{port}_rx") >= PINGS and s.get_int(f"port{port}_tx") >= PINGS, s.fields
        assert s.get_int(f"port{port}_drop") == 0, s.fields
    assert s.get_int("bridge_ports") == 2 and s.get_int("bridge_fdb") >= 2  # the PC's and the peer's MAC

    # a managed bridge: its own address answers from both sides, its console pings both
    for ns in (topo.pc_ns, topo.peer_ns):
        assert ping(topo, ns, c.dut_ip, count=2).returncode == 0, f"{ns} -> the bridge's address"
    for target in (c.pc_ip, c.peer_ip):
        reply = dut.console.run_ok(f"ping {target} -c 3 -i 0.1", timeout_s=10)
        assert reply.get_int("received") == 3, reply.fields


def test_managed_bridge_runs_its_own_iperf(bridge_dut: BridgeDut, tmp_path: Path) -> None:
    """The console's iperf runs from the bridge's own address, to the PC and to the peer."""
    dut, topo, c = bridge_dut, bridge_dut.topology, bridge_dut.topology.config
    for ns, ip in ((topo.pc_ns, c.pc_ip), (topo.peer_ns, c.peer_ip)):
        with Iperf2Server(topo.exec_prefix(ns), udp=False, port=5001, log_path=tmp_path / f"{ns}.csv", bind=ip) as srv:
            result = dut.console.run_ok(f"iperf -c {ip} -t 2", timeout_s=15)
            pc = srv.wait_record(timeout_s=5)
        print(f"bridge -> {ip}: DUT {result.fields['mbps']} Mbit/s, receiver {pc.mbps:.2f} Mbit/s")
        assert result.fields["status"] == "ok" and result.get_int("bytes") > 0 and pc.bytes > 0, result.fields


class PeerIperf3Server(ListeningServer):
    """One iperf3 test (-1) served in the peer namespace, bound to the peer's address."""

    def __init__(self, topo: InPathTopology, log_path: Path) -> None:
        prefix = topo.exec_prefix(topo.peer_ns)
        argv = [*prefix, IPERF3, "-s", "-1", "-B", topo.config.peer_ip, "-p", str(IPERF_PORT), "-J"]
        super().__init__(argv, prefix, IPERF_PORT, False, log_path, "iperf3 server (Debian package `iperf3`)")


def iperf3_through(topo: InPathTopology, reverse: bool, log_dir: Path) -> Iperf3Result:
    args = Iperf3ClientArgs(host=topo.config.peer_ip, port=IPERF_PORT, duration_s=IPERF_TIME_S, reverse=reverse)
    argv = [*topo.exec_prefix(topo.pc_ns), *args.argv(), "-O", str(IPERF_OMIT_S)]
    with PeerIperf3Server(topo, log_dir / f"iperf3-server-{'r' if reverse else 'f'}.json"):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=IPERF_TIME_S + 30, check=False)
    (log_dir / f"iperf3-client-{'r' if reverse else 'f'}.json").write_text(proc.stdout)
    return parse_json(proc.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("reverse", [False, True], ids=["pc_to_peer", "peer_to_pc"])
def test_tcp_through_the_bridge_forwards_every_frame(bridge_dut: BridgeDut, reverse: bool, tmp_path: Path) -> None:
    """5 s of TCP each way: every frame the bridge received on one port left by the other, none
    dropped, at a rate only a working bridge reaches; the rate against line rate is printed."""
    dut, topo = bridge_dut, bridge_dut.topology
    dut.console.run_ok("stats reset")
    result = iperf3_through(topo, reverse, tmp_path)
    floor = WORKING_SHARE * LINE_RATE_GOODPUT_MBPS
    first = ""
    if result.receiver_mbps < floor:  # the bridge runs on the bench PC: a miss is confirmed by a second
        # trial, as --confirm-misses does
        first = f"first trial {result.receiver_mbps:.2f} Mbit/s, retransmits {result.retransmits}; "
        print(f"{first}below {floor:.2f}: measured once more")
        result = iperf3_through(topo, reverse, tmp_path)
    s = stats(dut)
    ports = {k: s.get_int(k) for k in s.fields if k.startswith("port")}
    print(
        f"{'peer -> PC' if reverse else 'PC -> peer'} through the bridge: goodput {result.receiver_mbps:.2f} "
        f"Mbit/s = {100 * result.receiver_mbps / LINE_RATE_GOODPUT_MBPS:.1f} % of line rate, retransmits "
        f"{result.retransmits}; " + " ".join(f"{k}={v}" for k, v in ports.items())
    )
    assert result.receiver_mbps >= floor, f"{first}{result.receiver_mbps:.2f} Mbit/s < {floor:.2f}"
    data_port = 0 if not reverse else 1  # the port the data segments came in by
    assert ports[f"port{data_port}_rx"] > 1000 * IPERF_TIME_S, ports  # the transfer crossed the bridge
    for into, out in ((0, 1), (1, 0)):  # all forwarded (a few frames may be the namespaces' own: ARP,
        # IPv6 neighbour discovery, addressed to the bridge or sent by it)
        assert ports[f"port{into}_drop"] == 0, ports
        assert abs(ports[f"port{into}_rx"] - ports[f"port{out}_tx"]) <= 10, ports
    assert dut.process.alive() and dut.console.run_ok("version").fields["role"] == "bridge"


def test_killed_bridge_stops_forwarding(bridge_dut: BridgeDut) -> None:
    dut, topo = bridge_dut, bridge_dut.topology
    assert ping(topo, topo.pc_ns, topo.config.peer_ip, count=2).returncode == 0
    pid = dut.process.pid
    assert pid is not None
    os.killpg(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while dut.process.alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not dut.process.alive()
    dead = ping(topo, topo.pc_ns, topo.config.peer_ip, count=3)
    assert dead.returncode != 0 and " 0 received" in dead.stdout, dead.stdout[-300:]


BLACK_BOX_BRIDGE = (
    'ip link add br0 type bridge stp_state 0 forward_delay 0 && ip link set "$1" master br0 && '
    'ip link set "$2" master br0 && ip link set br0 up'
)


def test_black_box_linux_bridge_forwards() -> None:
    with InPathTopology(mode=InPathMode.BLACK_BOX, config=InPathConfig()) as topo:
        assert ping(topo, topo.pc_ns, topo.config.peer_ip, count=1).returncode != 0  # nothing joins p0, p1 yet
        topo.run_in_dut(BLACK_BOX_BRIDGE)
        through = ping(topo, topo.pc_ns, topo.config.peer_ip)
        assert through.returncode == 0, through.stdout[-300:]
        topo.set_carrier("peer", up=False)
        assert ping(topo, topo.pc_ns, topo.config.peer_ip, count=1).returncode != 0  # the peer's cable pulled
        topo.set_carrier("peer", up=True)
        deadline = time.monotonic() + 10
        while ping(topo, topo.pc_ns, topo.config.peer_ip, count=1).returncode != 0:
            assert time.monotonic() < deadline, "no forwarding after the peer's link came back"


def test_nothing_left_behind() -> None:
    before = own_namespaces()
    with InPathTopology() as topo:
        names = set(topo.namespaces)
        assert names <= set(list_namespaces())
        sleeper = subprocess.Popen([*topo.exec_prefix(topo.dut_ns), "sleep", "60"])
        # inside before the topology goes: an `ip netns exec` still on its way in fails by itself,
        # and its exit code would pass for the kill
        wait_until_inside(topo.dut_ns, sleeper.pid)
    assert own_namespaces() == before and not names & set(list_namespaces())
    assert sleeper.wait(timeout=5) < 0  # killed (by a signal) with its namespace

    with pytest.raises(BenchError):  # creation failing halfway (a bad address) removes what it made
        InPathTopology(config=InPathConfig(peer_ip="10.78.0.300")).create()
    assert own_namespaces() == before
