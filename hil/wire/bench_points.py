"""Where a bench is watched: the interfaces to capture (the PC's, and the peer's behind a DUT in
the path) and the hops whose counters are read, for each kind of bench link. The virtual benches
are the suite's own namespaces; a real bench's PC NIC is the interface its kernel routes the DUT's
address through."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from hil.dut.adapter import BenchLink
from hil.plumbing import in_path, netns
from hil.plumbing.hardware_link import HardwareLink
from hil.plumbing.in_path import InPathTopology
from hil.plumbing.netns import VirtualTopology
from hil.wire.counters import Hops, Interface


@dataclass(frozen=True)
class CapturePoint:
    side: str  # "pc" or "peer": whose view of the wire
    prefix: tuple[str, ...]
    iface: str


def routed_interface(prefix: tuple[str, ...], address: str) -> str | None:
    """The interface the kernel sends packets to `address` through (a real bench's PC NIC)."""
    try:
        out = subprocess.run([*prefix, "ip", "-o", "route", "get", address], capture_output=True, text=True,
                             timeout=5, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.stdout.split()
    return words[words.index("dev") + 1] if "dev" in words[:-1] else None


def watch_points(link: BenchLink, far_ip: str, dut_counters: Callable[[bool], dict[str, int] | None] | None,
                 ) -> tuple[list[CapturePoint], Hops]:  # fmt: skip
    """The capture points and the counters' hops of a bench link."""
    if isinstance(link, VirtualTopology):
        pc, dut = tuple(link.exec_prefix(link.pc_ns)), tuple(link.exec_prefix(link.dut_ns))
        ifaces = (Interface("pc", pc, netns.PC_IF), Interface("dut_side", dut, netns.DUT_IF),
                  Interface("dut_tap", dut, netns.TAP))  # fmt: skip
        hops = Hops(ifaces, (("pc", pc),), link.loss_counter, dut_counters)
        return [CapturePoint("pc", pc, netns.PC_IF)], hops
    if isinstance(link, InPathTopology):
        pc, dut, peer = (tuple(link.exec_prefix(ns)) for ns in link.namespaces)
        ifaces = [Interface("pc", pc, in_path.PC_IF), Interface("port_pc", dut, in_path.PORT_PC),
                  Interface("port_peer", dut, in_path.PORT_PEER), Interface("peer", peer, in_path.PEER_IF)]  # fmt: skip
        if link.mode == in_path.InPathMode.FIRMWARE:
            ifaces += [Interface("dut_tap_pc", dut, in_path.TAP_PC), Interface("dut_tap_peer", dut, in_path.TAP_PEER)]
        hops = Hops(tuple(ifaces), (("pc", pc), ("peer", peer)), link.loss_counter, dut_counters)
        return [CapturePoint("pc", pc, in_path.PC_IF), CapturePoint("peer", peer, in_path.PEER_IF)], hops
    assert isinstance(link, HardwareLink)
    pc = tuple(link.exec_prefix(link.pc_ns))
    nic = routed_interface(pc, far_ip)
    ifaces = (Interface("pc", pc, nic, pause=True),) if nic else ()  # a real NIC: its pause frames too
    hops = Hops(ifaces, (("pc", pc),), None, dut_counters)
    return ([CapturePoint("pc", pc, nic)] if nic else []), hops
