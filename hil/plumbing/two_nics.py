"""A real bench's frame tester ends: the PC's bench NIC (the namespace network.pc_netns, or the
root one) and its second NIC (peer.netns), each found by the address the bench file gives it.
The suite creates nothing here: the NICs, their namespaces and addresses are the engineer's."""

from __future__ import annotations

import json
import subprocess

from hil.errors import BenchError
from hil.traffic.frame_tester import TesterEnd
from hil.traffic.tester_ceilings import NicIdentity


def nic_holding(netns: str | None, ip: str, what: str) -> NicIdentity:
    """The interface that holds `ip` in `netns` (None: the root namespace), with its link address."""
    argv = ["ip", *(["-n", netns] if netns else []), "-j", "addr", "show"]
    where = f"namespace {netns}" if netns else "the root namespace"
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=True).stdout
        links = json.loads(out)
    except (subprocess.SubprocessError, ValueError) as exc:
        raise BenchError(f"{what}: `{' '.join(argv)}` failed ({exc})") from None
    for link in links:
        if any(a.get("local") == ip for a in link.get("addr_info", [])):
            return NicIdentity(netns, str(link["ifname"]), str(link.get("address", "")))
    raise BenchError(f"{what}: no interface holds {ip} in {where} (as the bench file says it should)")


def two_nic_ends(
    pc_netns: str | None, pc_ip: str, peer_netns: str, peer_ip: str
) -> tuple[TesterEnd, TesterEnd, NicIdentity, NicIdentity]:
    """(PC end, peer end, and which NICs they are) of the frame tester on a real bench."""
    pc = nic_holding(pc_netns, pc_ip, "the PC's bench NIC")
    peer = nic_holding(peer_netns, peer_ip, "the PC's second NIC (the peer)")

    def prefix(ns: str | None) -> tuple[str, ...]:
        return ("ip", "netns", "exec", ns) if ns else ()

    return (
        TesterEnd("PC", prefix(pc_netns), pc.iface, pc_ip),
        TesterEnd("peer", prefix(peer_netns), peer.iface, peer_ip),
        pc,
        peer,
    )
