"""The virtual link leaves nothing behind, also after a killed run."""

import subprocess

import pytest

from hil.plumbing.netns import NETNS_PREFIX, VirtualTopology, cleanup_stale, list_namespaces
from tests.support.processes import wait_until_inside

pytestmark = pytest.mark.virtual_bench


def test_topology_is_removed_on_exit_and_on_error():
    with VirtualTopology() as topo:
        names = {topo.pc_ns, topo.dut_ns}
        assert names <= set(list_namespaces())
        pc = topo.exec_prefix(topo.pc_ns)
        sleeper = subprocess.Popen([*pc, "sleep", "60"])
        wait_until_inside(topo.pc_ns, sleeper.pid)
    assert not names & set(list_namespaces())
    assert sleeper.wait(timeout=5) < 0  # processes left in the namespace were killed (by a signal)

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
