"""Reconnection (the thesis's undock/redock): with a DUT in the path, the link on one side of it
goes down for a second and comes back while a TCP stream PC -> peer and a 20 Hz ping run through
it; recorded: how long after the link is back ping answers again and the stream is back at 90 %
of the link's theoretical goodput (iperf 3's 0.1 s intervals). Then the same outage once more
under the frame tester's evenly spaced stream PC -> peer (RFC 6201's reset time, for a
reconnection): the frames lost over the offered rate, the longest gap at the receiver, and what
of it the DUT added to the outage itself. The link is restored whatever happens; the DUT must
forward afterwards (the next case's forwarding check, and this one's)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import threading
import time
from typing import TYPE_CHECKING

import allure

from hil.checks import criteria
from hil.errors import BenchError, DutError
from hil.plumbing.in_path import InPathTopology
from hil.results.recorder import make_record
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.metrics import RECONNECT, ScenarioShape
from hil.scenarios.recovery import back_at_rate, first_after, intervals_from_iperf3, reply_times
from hil.scenarios.rfc2544_tester import tester_ends
from hil.scenarios.sweep import attach_text, check
from hil.stats import summarize
from hil.theory import tcp_goodput_mbps
from hil.tools.iperf3 import Iperf3ClientArgs
from hil.tools.iperf3 import run_client as run_iperf3_client
from hil.tools.ping import ping_argv
from hil.traffic.frame_tester import FrameTrial, Phase, run_frames

if TYPE_CHECKING:
    from hil.session import HilContext

BEFORE_S, DOWN_S, AFTER_S = 2.0, 1.0, 5.0  # the stream's time before, during and after the outage
BACK_AT_PCT = 90.0  # "back at rate": this share of the link's theoretical TCP goodput
PORT = 5003
# the RFC 6201 pass: frames of 512 B at 10,000 frames/s (41 Mbit/s: the outage resolved to 0.1 ms)
FRAME_BYTES, FRAME_FPS = 512, 10_000.0
FRAMES_BEFORE_S, FRAMES_AFTER_S = 1.0, 1.5
OWN_LINKS_ONLY = (
    "the reconnection case takes the link beside the DUT down and up: only the virtual bench's in-path "
    "topology owns its links (a real DUT in the path is cabled; undock and redock it by hand)"
)


@register
class Reconnection:
    name = "reconnection (undock / redock)"
    marker = "reconnect"
    marker_doc = "a link beside a DUT in the path down and up while traffic runs"
    shapes = (ScenarioShape("reconnect", r"(?:pc|peer)_side", RECONNECT, "pc_side"),)

    def cases(self, bench: BenchFacts) -> list[Case]:
        """Both sides' links; only where the bench owns them (the virtual in-path topology): a real
        DUT's cables are not the suite's to pull."""
        why = None if bench.local or not bench.in_path else OWN_LINKS_ONLY
        return [Case(self, f"reconnect/{side}_side", side, topology="in_path", skip=why) for side in ("pc", "peer")]

    def run(self, hil: HilContext, case: Case) -> None:
        reconnection(hil, str(case.point))


def reconnection(hil: HilContext, side: str) -> None:
    allure.dynamic.feature("reconnection (undock / redock)")
    allure.dynamic.story(f"reconnect {side} side")
    topo, far = hil.topology, hil.far_end
    if not isinstance(topo, InPathTopology):  # the contract runs the case on the virtual in-path bench only
        raise TypeError(
            f"reconnection needs the virtual in-path topology, the contract let it run on {type(topo).__name__}"
        )
    scenario, case = "reconnect", f"{side}_side"
    limits = hil.thresholds.limits(scenario, case)  # no limits: an error before the link is touched
    total_s = BEFORE_S + DOWN_S + AFTER_S
    target = tcp_goodput_mbps(hil.link_mbit, 1460) * BACK_AT_PCT / 100
    pc = hil.pc_side.netns_prefix
    args = Iperf3ClientArgs(host=far.ip, port=PORT, duration_s=total_s, interval_s=0.1,
                            congestion=hil.pc_side.tcp_congestion)  # fmt: skip
    ping_args = ping_argv(pc, far.ip, interval_s=0.05, deadline_s=total_s + 1, timestamps=True)
    runs: list[tuple[object, str]] = []
    with far.iperf3_server(PORT, "reconnect"):
        ping = subprocess.Popen(ping_args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            started = time.time()
            client = threading.Thread(target=lambda: runs.append(run_iperf3_client(pc, args, total_s * 2 + 30)))
            client.start()
            time.sleep(BEFORE_S)
            down_at = time.time()
            topo.set_carrier(side, False)
            try:
                time.sleep(DOWN_S)
            finally:
                topo.set_carrier(side, True)
            up_at = time.time()
            client.join(timeout=total_s * 2 + 30)
            ping_out, _ = ping.communicate(timeout=total_s + 15)
        finally:
            if ping.poll() is None:
                ping.kill()
                ping.wait()
    if not runs:
        raise BenchError("the iperf 3 client of the reconnection case did not finish")
    _, text = runs[0]
    attach_text("ping PC -> peer (-D: wall-clock times)", ping_out)
    attach_text("iperf 3 client JSON", text)
    replies = reply_times(ping_out)
    ping_back = first_after(replies, up_at)
    stream_back = back_at_rate(intervals_from_iperf3(json.loads(text), started), up_at, target)
    if ping_back is None:
        raise DutError(f"ping PC -> peer never answered again after the {side}-side link came back")
    ping_ms = (ping_back - up_at) * 1000
    stream_ms = (stream_back - up_at) * 1000 if stream_back is not None else float("inf")
    frames = frames_through_outage(hil, topo, side)
    rec = make_record(scenario, case, hil.dut.config.name, summarize([stream_ms]), None, unit="ms")
    rec.measured.update(ping_recovery_ms=round(ping_ms, 1), tcp_recovery_ms=round(stream_ms, 1))
    rec.measured.update(
        {k: v for k, v in frames.items() if k in ("reset_ms", "reset_gap_ms", "reset_beyond_outage_ms")}
    )
    rec.extra["reset"] = frames
    rec.extra.update(
        down_s=round(up_at - down_at, 3), back_at_mbps=round(target, 3), side=side,
        replies_before=sum(t < down_at for t in replies), replies_after=sum(t >= up_at for t in replies),
    )  # fmt: skip
    rec.traffic_s = round(time.time() - started, 3)
    hil.recorder.record(rec, started, time.time())
    attach_text(
        "recovery",
        f"{side}-side link down {up_at - down_at:.3f} s, {BEFORE_S:g} s into a {total_s:g} s TCP stream PC -> peer\n"
        f"ping answered again {ping_ms:.0f} ms after the link came back\n"
        f"the stream was back at {target:.2f} Mbit/s ({BACK_AT_PCT:g} % of theory) "
        + (f"{stream_ms:.0f} ms after it" if stream_back is not None else "never within the test")
        + f"\n\nRFC 6201 under {FRAME_FPS:,.0f} frames/s of {FRAME_BYTES} B PC -> peer, the link down "
        f"{frames['down_ms']:.1f} ms: {frames['frames_lost']} frames lost = {frames['reset_lost_ms']:.1f} ms; longest "
        f"gap at the receiver {frames['reset_gap_ms']:.1f} ms; reset time {frames['reset_ms']:.1f} ms by "
        f"{frames['method']}; beyond the outage itself {frames['reset_beyond_outage_ms']:.1f} ms",
    )
    allure.dynamic.title(
        f"reconnect/{case}: link down {up_at - down_at:.1f} s; ping back after {ping_ms:.0f} ms, TCP back at "
        f"{BACK_AT_PCT:g} % after {stream_ms:.0f} ms; frames: reset {frames['reset_ms']:.0f} ms (RFC 6201, "
        f"{frames['reset_beyond_outage_ms']:.1f} ms beyond the outage); {criteria(rec.metrics(), limits)}"
    )
    check(hil, scenario, [rec])


def frames_through_outage(hil: HilContext, topo: InPathTopology, side: str) -> dict[str, float | int | str]:
    """The outage again under the frame tester's stream PC -> peer: RFC 6201's two reset times
    (frames lost over the offered rate; the longest gap at the receiver) and the lost time beyond
    the time the link was down (what the DUT added: re-learning, queues, its own link handling)."""
    src, dst = tester_ends(hil, "dut_rx")
    src = dataclasses.replace(src, device_input=None)  # no capture on a port that goes down
    count = round(FRAME_FPS * (FRAMES_BEFORE_S + DOWN_S + FRAMES_AFTER_S))
    trials: list[FrameTrial] = []
    failed: list[BaseException] = []

    def stream() -> None:
        try:
            trials.append(run_frames(src, dst, FRAME_BYTES, [Phase(FRAME_FPS, count)], line_mbps=hil.link_mbit))
        except BaseException as exc:  # raised in the case, below
            failed.append(exc)

    sender = threading.Thread(target=stream, name="reconnect-frames")
    sender.start()
    try:
        time.sleep(FRAMES_BEFORE_S)
        try:
            topo.set_carrier(side, False)
            down_at = time.monotonic()  # each command's own start-up on both ends: they cancel out
            time.sleep(DOWN_S)
        finally:
            topo.set_carrier(side, True)
        down_ms = (time.monotonic() - down_at) * 1000
    finally:
        sender.join(timeout=(FRAMES_BEFORE_S + DOWN_S + FRAMES_AFTER_S) * 3 + 30)
    if failed:
        raise failed[0]
    if not trials:
        raise BenchError("the frame tester's stream through the outage did not finish")
    t = trials[0]
    gap = t.receiver["longest_gap"]
    lost_ms = t.lost / FRAME_FPS * 1000
    gap_ms = float(gap["ns"]) / 1e6
    # the PC's own link down (the PC side): its interface holds the frames until the carrier is
    # back, as a NIC without a link does, so few are lost and the gap is the reset time
    held = side == "pc"
    reset_ms = gap_ms if held else lost_ms
    return {
        "reset_by": f"the {side}-side link down and up",
        "method": "the longest gap (the sender's own link was down: its frames were held, not lost)"
        if held
        else "the frames lost over the offered rate",
        "offered_fps": FRAME_FPS,
        "frame_bytes": FRAME_BYTES,
        "frames_sent": t.sent,
        "frames_lost": t.lost,
        "down_ms": round(down_ms, 1),
        "reset_ms": round(reset_ms, 1),
        "reset_lost_ms": round(lost_ms, 1),
        "reset_gap_ms": round(gap_ms, 1),
        "reset_beyond_outage_ms": round(reset_ms - down_ms, 1),
    }
