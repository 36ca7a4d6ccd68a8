"""The RFC 2544 family's tester measured without the DUT (RFC 9971's recommendation): its two
ends joined directly (hil.plumbing.tester_loop), the lower of CALIBRATION_TRIALS trials at the line
rate per frame size is its ceiling: the search's max load, and what a DUT's throughput is compared
with (within hil.bench_faults.TESTER_MARGIN of a ceiling below the line rate: tester-limited). The ends of the
tester: on the virtual in-path bench the PC's and the peer's interfaces, on a real bench the PC's
two NICs around the DUT (hil.plumbing.two_nics), calibrated beforehand with a cable between them
(hil.traffic.tester_ceilings)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import allure

from hil.plumbing.in_path import PC_IF, PEER_IF, PORT_PC, PORT_PEER, InPathTopology
from hil.plumbing.tester_loop import TesterLoop
from hil.plumbing.two_nics import two_nic_ends
from hil.scenarios.rfc2544_tests import plan_of
from hil.scenarios.sweep import attach_text
from hil.traffic.frame_tester import DEFAULT_LINGER_MS, InputTap, TesterEnd
from hil.traffic.tester_ceilings import Ceiling, NicIdentity, ceilings_table, load_ceilings, measure_ceiling

if TYPE_CHECKING:
    from hil.session import HilContext


_CEILINGS: dict[tuple[int, int, float], Ceiling] = {}  # (frame size, slow ns, link Mbit/s) -> ceiling


def tester_ends(hil: HilContext, direction: str) -> tuple[TesterEnd, TesterEnd]:
    """(sender, receiver). On the virtual in-path bench: the PC's and the peer's interfaces, each
    with the DUT's port its frames enter through (p0, p1: their spacing is captured there). On a
    real bench: the PC's bench NIC and its second NIC (the DUT's ports are the device's own: the
    spacing is the sender's)."""
    topo = hil.topology
    if not isinstance(topo, InPathTopology):
        pc, peer, _, _ = _real_ends(hil)
        return (pc, peer) if direction == "dut_rx" else (peer, pc)
    dut = tuple(topo.exec_prefix(topo.dut_ns))
    linger = linger_ms(topo)
    pc = TesterEnd("PC", tuple(topo.exec_prefix(topo.pc_ns)), PC_IF, hil.pc_side.ip,
                   InputTap(f"DUT's port {PORT_PC}", dut, PORT_PC), linger)  # fmt: skip
    peer = TesterEnd("peer", tuple(topo.exec_prefix(topo.peer_ns)), PEER_IF, hil.far_end.ip,
                     InputTap(f"DUT's port {PORT_PEER}", dut, PORT_PEER), linger)  # fmt: skip
    return (pc, peer) if direction == "dut_rx" else (peer, pc)


def _real_ends(hil: HilContext) -> tuple[TesterEnd, TesterEnd, NicIdentity, NicIdentity]:
    cfg = hil.dut.config
    if cfg.tester is None or cfg.peer is None or cfg.peer.netns is None:  # the contract skips such a bench
        raise TypeError("the RFC 2544 family ran on a real bench without a two-NIC tester")
    return two_nic_ends(cfg.network.pc_netns, cfg.network.pc_ip, cfg.peer.netns, cfg.peer.ip)


def linger_ms(topo: InPathTopology) -> int:
    """How long a receiving end waits after the sender's last frame: three times the deepest of
    the bench shapers' queues (tbf's latency; frames may wait there on the way), at least the
    tester's default."""
    units = {"us": 1e-3, "ms": 1.0, "s": 1e3}  # tc's time units, as the bench files write them
    deepest = 0.0
    for shaping in (topo.pc_shaping, topo.peer_shaping):
        if shaping is None:
            continue
        m = re.fullmatch(r"([0-9.]+)(us|ms|s)", shaping.latency.strip())
        deepest = max(deepest, float(m[1]) * units[m[2]] if m else 1000.0)  # unreadable: a second
    return max(DEFAULT_LINGER_MS, round(3 * deepest))


def tester_ceilings(hil: HilContext, sizes: Sequence[int], slow_ns: int) -> dict[int, Ceiling]:
    """The tester's ceilings at these frame sizes, once per run (the first case that needs them
    gets every size of the run and attaches the table): on the virtual bench measured now with
    its two ends joined directly; on a real bench, read from its calibration file."""
    link = hil.link_mbit
    missing = [s for s in sizes if (s, slow_ns, link) not in _CEILINGS]
    if missing:
        topo = hil.topology
        if not isinstance(topo, InPathTopology):
            cfg = hil.dut.config
            assert cfg.tester is not None
            _, _, pc_nic, peer_nic = _real_ends(hil)
            read = load_ceilings(cfg.tester.ceilings_path(), missing, pc_nic, peer_nic, link, slow_ns)
            _CEILINGS.update({(s, slow_ns, link): c for s, c in read.items()})
        else:
            step = f"the tester without the DUT: its ceilings at {', '.join(map(str, missing))} B"
            with allure.step(step), TesterLoop(topo.config, topo.pc_shaping) as loop:
                pc = TesterEnd("PC", tuple(loop.exec_prefix(loop.pc_ns)), PC_IF, hil.pc_side.ip)
                peer = TesterEnd("peer", tuple(loop.exec_prefix(loop.peer_ns)), PEER_IF, hil.far_end.ip)
                for size in missing:
                    seconds = plan_of(hil.profile).calibration_s
                    _CEILINGS[(size, slow_ns, link)] = measure_ceiling(pc, peer, size, link, slow_ns, seconds)
        attach_text("the tester's ceilings (no DUT)", ceilings_table([_CEILINGS[(s, slow_ns, link)] for s in sizes]))
    return {s: _CEILINGS[(s, slow_ns, link)] for s in sizes}
