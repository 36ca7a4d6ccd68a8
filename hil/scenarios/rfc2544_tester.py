"""The RFC 2544 family's tester measured without the DUT (RFC 9971's recommendation): its two
ends joined directly (hil.plumbing.tester_loop), the lower of CALIBRATION_TRIALS trials at the line
rate per frame size is its ceiling: the search's max load, and what a DUT's throughput is compared
with (within TESTER_MARGIN of a ceiling below the line rate: tester-limited). The ends of the
tester on the virtual in-path bench: the PC's and the peer's interfaces."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import allure

from hil.plumbing.in_path import PC_IF, PEER_IF, PORT_PC, PORT_PEER, InPathTopology
from hil.plumbing.tester_loop import TesterLoop
from hil.scenarios.rfc2544_tests import plan_of
from hil.scenarios.sweep import attach_text
from hil.traffic.frame_tester import (
    DEFAULT_LINGER_MS,
    FrameTrial,
    InputTap,
    Phase,
    TesterEnd,
    line_rate_fps,
    run_frames,
)
from hil.traffic.roles import GENERATOR_TOLERANCE

if TYPE_CHECKING:
    from hil.session import HilContext

TESTER_MARGIN = 0.03  # a throughput within 3 % of the tester's own ceiling is the tester's number
CALIBRATION_TRIALS = 2  # the tester's ceiling: the lower of these trials at the line rate


@dataclass
class Ceiling:
    """The tester's own best frame rate at a frame size, measured without the DUT."""

    frame_bytes: int
    fps: float
    line_fps: float
    trials: list[FrameTrial] = field(default_factory=list)

    @property
    def limited(self) -> bool:
        """The tester cannot offer the line rate at this size."""
        return self.fps < GENERATOR_TOLERANCE * self.line_fps


_CEILINGS: dict[tuple[int, int, float], Ceiling] = {}  # (frame size, slow ns, link Mbit/s) -> ceiling


def tester_ends(hil: HilContext, direction: str) -> tuple[TesterEnd, TesterEnd]:
    """(sender, receiver): the PC's and the peer's interfaces on the virtual in-path bench, each
    with the DUT's port its frames enter through (p0, p1: their spacing is captured there)."""
    topo = hil.topology
    assert isinstance(topo, InPathTopology)
    dut = tuple(topo.exec_prefix(topo.dut_ns))
    linger = linger_ms(topo)
    pc = TesterEnd("PC", tuple(topo.exec_prefix(topo.pc_ns)), PC_IF, hil.pc_side.ip,
                   InputTap(f"DUT's port {PORT_PC}", dut, PORT_PC), linger)  # fmt: skip
    peer = TesterEnd("peer", tuple(topo.exec_prefix(topo.peer_ns)), PEER_IF, hil.far_end.ip,
                     InputTap(f"DUT's port {PORT_PEER}", dut, PORT_PEER), linger)  # fmt: skip
    return (pc, peer) if direction == "dut_rx" else (peer, pc)


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
    """The tester's ceilings at these frame sizes, measured once per run without the DUT (the
    first case that needs them measures every size of the run and attaches the table)."""
    link = hil.link_mbit
    missing = [s for s in sizes if (s, slow_ns, link) not in _CEILINGS]
    if missing:
        topo = hil.topology
        assert isinstance(topo, InPathTopology)
        with allure.step(f"the tester without the DUT: its ceilings at {', '.join(map(str, missing))} B"):
            with TesterLoop(topo.config, topo.pc_shaping) as loop:
                pc = TesterEnd("PC", tuple(loop.exec_prefix(loop.pc_ns)), PC_IF, hil.pc_side.ip)
                peer = TesterEnd("peer", tuple(loop.exec_prefix(loop.peer_ns)), PEER_IF, hil.far_end.ip)
                for size in missing:
                    line = line_rate_fps(link, size)
                    count = max(2, round(line * plan_of(hil.profile).calibration_s))
                    trials = [
                        run_frames(
                            pc, peer, size, [Phase(line, count)], line_mbps=link, slow_ns=slow_ns, label="tester"
                        )
                        for _ in range(CALIBRATION_TRIALS)
                    ]
                    # what the tester reaches every time: the lower of its trials (sent, and received)
                    best = min(min(t.achieved_fps, t.received / t.elapsed_s if t.elapsed_s else 0.0) for t in trials)
                    _CEILINGS[(size, slow_ns, link)] = Ceiling(size, min(best, line), line, trials)
            attach_text(
                "the tester's ceilings (no DUT)", ceilings_table([_CEILINGS[(s, slow_ns, link)] for s in sizes])
            )
    return {s: _CEILINGS[(s, slow_ns, link)] for s in sizes}


def ceilings_table(ceilings: Sequence[Ceiling]) -> str:
    lines = [
        "The frame tester measured without the DUT (its two ends joined directly, the same medium), "
        f"the lower of {CALIBRATION_TRIALS} trials at the line rate:",
        f"{'frame B':>7s} {'line fps':>10s} {'tester fps':>10s} {'% of line':>9s} {'lost':>6s}"
        "  gap us: even median p95",
    ]
    for c in ceilings:
        t = c.trials[-1]
        sp = t.spacing_fields()
        lines.append(
            f"{c.frame_bytes:7d} {c.line_fps:10.0f} {c.fps:10.0f} {100 * c.fps / c.line_fps:9.1f} "
            f"{sum(x.lost for x in c.trials):6d}  {sp['even_gap_us']:7.2f} {sp['median_gap_us']:7.2f} "
            f"{sp['p95_gap_us']:7.2f}" + ("  tester below the line rate" if c.limited else "")
        )
    return "\n".join(lines)
