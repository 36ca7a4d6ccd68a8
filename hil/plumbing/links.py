"""The bench's link for a DUT, as its bench file describes it, and the peer host behind a DUT in
the path: a DUT on the bench PC gets namespaces, veth, bridge and tap with shaping and injected
loss (the virtual link, or PC <-> DUT <-> peer); a real board the PC's bench NIC."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from hil.config.sections import DutBase, management_pair
from hil.dut.adapter import BenchLink
from hil.plumbing.cpu_plan import bench_placed, make_plan
from hil.plumbing.hardware_link import HardwareLink
from hil.plumbing.in_path import InPathConfig, InPathMode, InPathTopology
from hil.plumbing.netns import TbfShaping, TopologyConfig, VirtualTopology
from hil.plumbing.peer_host import PeerHost, real_peer, virtual_peer


@contextlib.contextmanager
def open_bench_link(dut: DutBase) -> Iterator[BenchLink]:
    """The DUT's link for the run, removed with everything it made when the context ends."""
    net = dut.network
    if not dut.local:
        yield HardwareLink(net.pc_netns)
        return
    # the DUT on a core of its own, the bench's tools on the others (hil.plumbing.cpu_plan); a black box
    # (a kernel bridge, a model device) has no program of ours to place
    plan = make_plan() if dut.CPU_PLAN else None
    with bench_placed(plan) as placement:
        if dut.in_path:
            assert dut.peer is not None  # the bench file's check: role in_path has a peer
            peer, link = dut.peer, dut.link
            addresses = InPathConfig(net.pc_ip, net.dut_ip, peer.ip, net.prefix_len, net.dut_mac)
            pc_shaping = TbfShaping(rate_mbit=link.rate_mbit) if link.shaping else None
            peer_shaping = TbfShaping(rate_mbit=peer.rate_mbit) if peer.rate_mbit else None
            management = management_pair(peer.ssh.host) if peer.ssh is not None else None
            mode = InPathMode(dut.IN_PATH_MODE)
            with InPathTopology(mode, addresses, pc_shaping, peer_shaping, management, peer.dut is not None,
                                plan) as path:  # fmt: skip
                path.placement = placement
                yield path
            return
        config = TopologyConfig(net.pc_ip, net.dut_ip, net.prefix_len, net.dut_mac)
        with VirtualTopology(config, cpu_plan=plan, partner=dut.partner is not None) as topo:
            topo.placement = placement
            if dut.link.shaping:
                topo.shape(TbfShaping(rate_mbit=dut.link.rate_mbit))
            topo.inject_loss(dut.link.loss_pct)
            yield topo


def reach_peer(link: BenchLink, dut: DutBase, workdir: Path) -> contextlib.AbstractContextManager[PeerHost | None]:
    """The peer host of a DUT in the path, reached and checked (None for a DUT that ends the
    traffic, and for a DUT in the path with a DUT behind it): a namespace of the virtual in-path
    bench, else the bench file's real peer."""
    if dut.peer is None or dut.peer.dut is not None or isinstance(link, VirtualTopology):
        return contextlib.nullcontext(None)
    if isinstance(link, InPathTopology):
        return virtual_peer(link, dut.peer, workdir)
    return real_peer(link, dut.peer, workdir)  # type: ignore[arg-type]
