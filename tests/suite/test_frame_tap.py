"""The frame tester's capture at a device's input (frametester tap) on a real link: the tester's
two ends joined directly (hil.plumbing.tester_loop, unshaped), the capture on the receiving end's
port. It must see every frame the sender offered, at the gaps the sender spaced them (evenly at a
steady rate; a burst's pauses are no gaps of the stream), and say which frames never arrived."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hil.plumbing import tester_loop
from hil.plumbing.in_path import PC_IF, PEER_IF, InPathConfig
from hil.plumbing.netns import list_namespaces
from hil.traffic import frame_tester
from hil.traffic.frame_tester import InputTap, Phase, run_frames

pytestmark = [pytest.mark.virtual_bench]

Ends = tuple[frame_tester.TesterEnd, frame_tester.TesterEnd]  # the sender's, the receiver's


@pytest.fixture
def ends() -> Iterator[Ends]:
    cfg = InPathConfig()
    with tester_loop.TesterLoop(cfg, None) as loop:
        pc = frame_tester.TesterEnd("PC", tuple(loop.exec_prefix(loop.pc_ns)), PC_IF, cfg.pc_ip)
        tap = InputTap("peer's port", tuple(loop.exec_prefix(loop.peer_ns)), PEER_IF)
        peer = frame_tester.TesterEnd("peer", tuple(loop.exec_prefix(loop.peer_ns)), PEER_IF, cfg.peer_ip, tap)
        yield pc, peer
        names = (loop.pc_ns, loop.peer_ns)
    assert not set(names) & set(list_namespaces()), "the loop's namespaces outlived it"


def test_the_capture_sees_every_frame_at_the_gaps_they_were_sent(ends: Ends) -> None:
    pc, peer = ends
    t = run_frames(pc, peer, 512, [Phase(10_000, 5_000)], tap=peer.device_input)
    assert t.tap is not None and t.spacing_source == "capture at the peer's port"
    assert t.received == 5_000 and t.missing_at_input == 0, (t.tap, t.receiver)
    sp = t.spacing_fields()
    assert sp["even_gap_us"] == pytest.approx(100.0, abs=0.1)
    # a host stall can stretch a few gaps; the median is the tester's spacing
    assert abs(float(sp["median_gap_us"]) - 100.0) <= 2.0, sp  # type: ignore[arg-type]


def test_bursts_pauses_are_no_gaps_and_a_second_phase_has_its_own_even_gap(
    ends: Ends,
) -> None:
    pc, peer = ends
    # three bursts of 200 frames at 20,000 frames/s, 50 ms apart: 3 x 199 gaps of 50 us, none of 50 ms
    t = run_frames(pc, peer, 256, [Phase(20_000, 200)], repeat=3, pause_ms=50, tap=peer.device_input)
    assert t.tap is not None and int(t.tap["gaps"]["n"]) <= 3 * 199, t.tap  # type: ignore[index]
    assert float(t.tap["gaps"]["max_ns"]) < 20e6, t.tap  # type: ignore[index]
    assert t.missing_at_input == 0
    # 2,000 frames at 20,000/s then 1,000 at 5,000/s: the mean even gap weighs both phases
    t = run_frames(pc, peer, 128, [Phase(20_000, 2_000), Phase(5_000, 1_000)], tap=peer.device_input)
    even = float(t.tap["gaps"]["even_ns"])  # type: ignore[index]
    assert even == pytest.approx((1999 * 50_000 + 1000 * 200_000) / 2999, rel=0.01), t.tap
