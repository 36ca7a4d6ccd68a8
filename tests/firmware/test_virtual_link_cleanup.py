"""The virtual link leaves nothing behind, also after a killed run."""

import subprocess
import time

import pytest

from hil.bench.netns import NETNS_PREFIX, VirtualTopology, cleanup_stale, list_namespaces

pytestmark = pytest.mark.virtual_bench


def wait_until_inside(ns: str, pid: int) -> None:
    """`ip netns exec` has entered the namespace and exec'd the command (a process that is still
    on its way in when the topology is removed is a race of this test, not a leftover)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=False).stdout.split()
        if str(pid) in pids:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} never appeared in namespace {ns}")


def test_topology_is_removed_on_exit_and_on_error():
    with VirtualTopology() as topo:
        names = {topo.pc_ns, topo.dut_ns}
        assert names <= set(list_namespaces())
        pc = topo.exec_prefix(topo.pc_ns)
        sleeper = subprocess.Popen([*pc, "sleep", "60"])
        wait_until_inside(topo.pc_ns, sleeper.pid)
    assert not names & set(list_namespaces())
    assert sleeper.wait(timeout=5) != 0  # processes left in the namespace were killed

    with pytest.raises(RuntimeError), VirtualTopology() as topo:
        names = {topo.pc_ns, topo.dut_ns}
        raise RuntimeError("test failure inside the bench")
    assert not names & set(list_namespaces())


def test_namespaces_of_a_dead_run_are_cleaned():
    # a pid that cannot be alive: above the kernel's pid_max limit
    stale = f"{NETNS_PREFIX}4194399-1-pc"
    subprocess.run(["ip", "netns", "add", stale], check=True)
    try:
        assert stale in cleanup_stale()
        assert stale not in list_namespaces()
    finally:
        subprocess.run(["ip", "netns", "delete", stale], check=False, capture_output=True)
