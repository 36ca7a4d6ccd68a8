"""The RFC 2544 tests after the throughput, each a function of the frame tester's trials: latency
(26.2) at the throughput and 10/50/90 % of it, the frame loss rate curve (26.3), back-to-back
frames (26.4), system recovery (26.5) and RFC 6201's reset time; their durations per run profile
(Plan); every trial kept for the case's table (Trials), with its spacing at the DUT's input."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hil.results.recorder import CaseRecord
from hil.scenarios.profiles import Profile
from hil.traffic.frame_tester import FrameTrial, Phase, TesterEnd, run_frames
from hil.traffic.roles import GENERATOR_TOLERANCE

if TYPE_CHECKING:
    from hil.session import HilContext

LATENCY_LOADS = (0.1, 0.5, 0.9, 1.0)  # shares of the throughput (CSIT's 10/50/90 % of NDR, and RFC 2544's 100 %)
LOSS_STEP = 0.1  # the frame loss rate curve's steps, of the line rate
OVERLOAD, UNDERLOAD = 1.1, 0.5  # system recovery: 110 % of the throughput, then 50 %
MAX_STALLED_PCT = 0.2  # a loss-free throughput trial stalled longer than this share is measured again
STALL_ATTEMPTS = 2
B2B_STALL_FRAMES = 2.0  # a burst the device drained this many frames in, in stalls, was not back to back
B2B_STALL_SHARE = 0.6  # a device under this share of the bursts' rate drains a stall in one
B2B_FIRST = 16  # the back-to-back search's first burst (frames); it doubles from there
B2B_ATTEMPTS = 3  # a burst the host stalled the tester in is sent again, up to this many times in all
B2B_STEPS_DOWN = 3  # confirmations one frame shorter after a lossy repeat
RESET_AT_S = 0.3  # RFC 6201: the reset is triggered this long into the stream


@dataclass(frozen=True)
class Plan:
    """The tests' durations per run profile (the throughput search's trials are the profile's
    capacity goals: RFC 2544's 60 s in the rfc2544 profile)."""

    latency_s: float  # each latency trial (RFC 2544: 120 s)
    loss_s: float  # each trial of the frame loss rate curve (RFC 2544: as long as the throughput's)
    b2b_repeats: int  # bursts at the longest loss-free length, to confirm it (RFC 2544: 50 trials)
    b2b_pause_ms: int  # between bursts (RFC 2544: a trial of at least 2 s)
    b2b_longest_s: float  # the longest burst tried, in seconds at the line rate
    overload_s: float  # system recovery: at 110 % of the throughput (RFC 2544: at least 60 s)
    recovery_s: float  # then at 50 %
    reset_s: float = 3.0  # RFC 6201: the stream the reset falls in, RESET_AT_S into it
    calibration_s: float = 5.0  # each of the tester's own trials without the DUT


PLANS = {
    # short trials, said in every case's trial table: `--profile rfc2544` runs the RFC's
    "quick": Plan(
        latency_s=0.5,
        loss_s=0.5,
        b2b_repeats=3,
        b2b_pause_ms=100,
        b2b_longest_s=0.25,
        overload_s=0.5,
        recovery_s=0.5,
        reset_s=1.0,
        calibration_s=1.0,
    ),
    "full": Plan(
        latency_s=10.0,
        loss_s=5.0,
        b2b_repeats=10,
        b2b_pause_ms=2000,
        b2b_longest_s=1.0,
        overload_s=10.0,
        recovery_s=10.0,
        reset_s=3.0,
    ),
    "rfc2544": Plan(
        latency_s=120.0,
        loss_s=60.0,
        b2b_repeats=50,
        b2b_pause_ms=2000,
        b2b_longest_s=2.0,
        overload_s=60.0,
        recovery_s=60.0,
        reset_s=10.0,
        calibration_s=10.0,
    ),
}


def plan_of(profile: Profile) -> Plan:
    return PLANS.get(profile.name) or PLANS[profile.points_name]


@dataclass
class Trials:
    """Every trial of a case, by test, for its table (each with the spacing at the DUT's input)."""

    rows: list[tuple[str, FrameTrial]] = field(default_factory=list)

    def add(self, test: str, t: FrameTrial) -> FrameTrial:
        self.rows.append((test, t))
        return t

    def table(self) -> str:
        lines = [
            f"{'#':>3s} {'test':10s} {'offered fps':>11s} {'sent':>9s} {'received':>9s} {'loss %':>8s} "
            f"{'achieved':>10s} {'stall %':>7s} {'lat p50 us':>10s} {'p99':>8s} {'not at DUT':>10s}  "
            "gap us: even median p5 p95 clumped %"
        ]
        for i, (test, t) in enumerate(self.rows, 1):
            sp = t.spacing_fields()
            lat = t.latency_us
            rate = f"{t.achieved_fps:10.0f}" if len(t.phases) == 1 and t.sender.get("repeat") == 1 else f"{'-':>10s}"
            missing = t.missing_at_input
            lines.append(
                f"{i:3d} {test:10s} {t.offered_fps:11.0f} {t.sent:9d} {t.received:9d} {100 * t.loss_ratio:8.4f} "
                f"{rate} {t.stalled_pct:7.3f} {lat['p50']:10.1f} {lat['p99']:8.1f} "
                f"{'-' if missing is None else missing:>10}  {sp['even_gap_us']:7.2f} "
                f"{sp['median_gap_us']:7.2f} {sp['p5_gap_us']:7.2f} {sp['p95_gap_us']:7.2f} {sp['clumped_pct']:7.2f}"
                + ("  tester short" if t.generator_limited else "")
            )
        sources = sorted({t.spacing_source for _, t in self.rows})
        lines.append(
            f"(gap: between consecutive offered frames as they entered the DUT, from {' and '.join(sources)}; "
            "even: at the offered rate; clumped: under half the even gap. Not at DUT: frames sent that never "
            "reached the DUT's port (lost before it, not by it). Stall: the share of the trial the host "
            "kept the tester from sending; a loss-free throughput trial stalled over "
            f"{MAX_STALLED_PCT:g} % is measured again. Latency: one-way, send to receive.)"
        )
        return "\n".join(lines)

    def spacing(self) -> list[dict[str, object]]:
        return [{"test": test, **t.spacing_fields()} for test, t in self.rows]


def latency_test(
    rec: CaseRecord,
    trials: Trials,
    src: TesterEnd,
    dst: TesterEnd,
    size: int,
    ndr_fps: float,
    plan: Plan,
    link: float,
    slow_ns: int,
) -> str:
    """RFC 2544 26.2 at the throughput rate, and CSIT's 10/50/90 % of it."""
    rows = []
    for share in LATENCY_LOADS:
        fps = ndr_fps * share
        t = trials.add(
            f"latency {share:.0%}",
            run_frames(
                src, dst, size, [Phase(fps, max(2, round(fps * plan.latency_s)))], line_mbps=link, slow_ns=slow_ns
            ),
        )
        lat = t.latency_us
        rows.append(
            {
                "share_pct": round(100 * share),
                "fps": round(fps),
                "loss_pct": round(100 * t.loss_ratio, 4),
                **{f"{k}_us": v for k, v in lat.items()},
            }
        )
    rec.extra["latency"] = rows
    top = rows[-1]
    rec.measured["latency_p50_ms"] = round(top["p50_us"] / 1000, 4)  # type: ignore[operator]
    rec.measured["latency_p99_ms"] = round(top["p99_us"] / 1000, 4)  # type: ignore[operator]
    return f"latency at throughput p50 {top['p50_us']} us, p99 {top['p99_us']} us"


def loss_curve_test(
    rec: CaseRecord,
    trials: Trials,
    src: TesterEnd,
    dst: TesterEnd,
    size: int,
    line_fps: float,
    max_fps: float,
    trial_s: float,
    link: float,
    slow_ns: int,
) -> str:
    """RFC 2544 26.3: from 100 % of the line rate down by 10 % until two successive trials lose
    nothing (a trial the tester could not offer is marked, its loss counted of what it sent)."""
    rows = []
    clean = 0
    step = 0
    while clean < 2 and step < round(1 / LOSS_STEP):
        share = 1 - step * LOSS_STEP
        fps = line_fps * share
        t = trials.add(
            f"loss {share:.0%}",
            run_frames(src, dst, size, [Phase(fps, max(2, round(fps * trial_s)))], line_mbps=link, slow_ns=slow_ns),
        )
        rows.append(
            {
                "share_pct": round(100 * share),
                "offered_fps": round(fps),
                "sent": t.sent,
                "received": t.received,
                "loss_pct": round(100 * t.loss_ratio, 4),
                "achieved_fps": round(t.achieved_fps),
                "tester_short": t.generator_limited,
            }
        )
        clean = clean + 1 if t.lost == 0 and not t.generator_limited else 0
        step += 1
    rec.extra["loss_curve"] = rows
    rec.measured["loss_at_line_pct"] = rows[0]["loss_pct"]  # type: ignore[assignment]
    return f"frame loss at the line rate {rows[0]['loss_pct']} %"


def back_to_back_test(
    rec: CaseRecord,
    trials: Trials,
    src: TesterEnd,
    dst: TesterEnd,
    size: int,
    line_fps: float,
    ndr_fps: float,
    plan: Plan,
    link: float,
    slow_ns: int,
) -> str:
    """RFC 2544 26.4: the longest burst at the minimum gap forwarded without loss (binary search
    on the burst's length), then `b2b_repeats` bursts of that length."""

    # a device slower than the line (its NDR its own, not the tester's) buffers a burst
    own_ndr = ndr_fps > 0 and not rec.extra.get("tester_limited")
    buffered = own_ndr and ndr_fps < GENERATOR_TOLERANCE * line_fps
    # a device far slower than the bursts the tester sends (under 60 % of them) drains a stall in
    # a burst: such a burst was not back to back; one nearly as fast as the tester drains little
    # in the tester's own small delays (at 64 B it cannot hold the line rate's 6.72-us gap), and
    # a stall changes nothing of its result
    bursts_fps = min(line_fps, float(rec.measured.get("tester_fps", line_fps)))
    drains_in_stalls = own_ndr and ndr_fps < B2B_STALL_SHARE * bursts_fps
    stalled: list[int] = []  # bursts the host stalled the tester in every time: counted as lost

    def was_stalled(t: FrameTrial) -> bool:
        """The host held the tester long enough for the device to forward B2B_STALL_FRAMES more
        than a back-to-back burst would let it (a CFS slice of the busy host's: milliseconds; not
        the tester's own microseconds at its limit): the burst was not back to back."""
        return drains_in_stalls and float(t.sender.get("stalled_ns", 0)) / 1e9 * ndr_fps >= B2B_STALL_FRAMES  # type: ignore[arg-type]

    def burst(n: int, repeat: int = 1) -> FrameTrial:
        """Bursts of n frames at the line rate; one the host stalled the tester in (a gap in the
        burst: it was not back to back) is sent again, up to B2B_ATTEMPTS times; stalled every
        time, it says nothing of the device and counts as lost (the result never overclaims)."""
        for _ in range(B2B_ATTEMPTS):
            t = trials.add(
                f"b2b {n}" + (f" x{repeat}" if repeat > 1 else ""),
                run_frames(
                    src,
                    dst,
                    size,
                    [Phase(line_fps, n)],
                    line_mbps=link,
                    repeat=repeat,
                    pause_ms=plan.b2b_pause_ms,
                    slow_ns=slow_ns,
                ),
            )
            if not (was_stalled(t) if drains_in_stalls else t.resyncs):
                break
        if was_stalled(t):
            stalled.append(n)
        return t

    def lost(t: FrameTrial) -> int:
        return t.lost or (1 if was_stalled(t) else 0)

    def lossy_bursts(t: FrameTrial, n: int) -> int:
        return len({i for a, b in t.lost_runs for i in range(a // n, b // n + 1)}) or (1 if was_stalled(t) else 0)

    longest = max(2, round(line_fps * plan.b2b_longest_s))
    # the longest burst first (a device that forwards at the line rate is done); after a loss,
    # bursts that double from B2B_FIRST frames until one loses, then bisection between the last
    # loss-free length and the first lossy one
    searched = [(longest, lost(burst(longest)))]
    lo, hi = 0, 0
    if searched[0][1]:
        hi = longest
        n = min(B2B_FIRST, longest - 1)
        while n < hi:
            searched.append((n, lost(burst(n))))
            if searched[-1][1]:
                hi = n
                break
            lo = n
            n = min(2 * n, hi - 1) if 2 * n < hi else hi
    else:
        lo = longest
    if hi == 0:
        status = "no loss in the longest burst tried"
    else:
        status = "regular"
        while hi - lo > 1:
            mid = (lo + hi) // 2
            searched.append((mid, lost(burst(mid))))
            lo, hi = (mid, hi) if searched[-1][1] == 0 else (lo, mid)
    result: dict[str, object] = {"frames": lo, "status": status, "searched": searched, "pause_ms": plan.b2b_pause_ms}
    if lo > 0 and status == "no loss in the longest burst tried":
        rec.measured["b2b_frames"] = lo
        last = trials.rows[-1][1]
        result.update(repeats=0, lossy_repeats=0, burst_fps=round(last.achieved_fps))
    elif lo > 0:
        # the length the search found, repeated; a repeat that lost frames takes it one frame down
        conf = burst(lo, plan.b2b_repeats)
        confirmed = [(lo, lossy_bursts(conf, lo))]
        while confirmed[-1][1] and lo > 1 and len(confirmed) <= B2B_STEPS_DOWN:
            lo -= 1
            conf = burst(lo, plan.b2b_repeats)
            confirmed.append((lo, lossy_bursts(conf, lo)))
        lossy = confirmed[-1][1]
        result["frames"] = lo
        result["confirmed"] = confirmed
        burst_fps = 1e9 / float(conf.gaps["median_ns"]) if float(conf.gaps["median_ns"]) > 0 else line_fps
        result.update(repeats=plan.b2b_repeats, lossy_repeats=lossy, burst_fps=round(burst_fps))
        rec.measured["b2b_frames"] = lo
        if status == "regular" and buffered:
            # the DUT forwards slower than the burst arrives: what it held when the burst's last
            # frame arrived is the buffer (the frame in service included): the burst's frames less
            # those forwarded in its lo - 1 gaps (a queue of 32 + 1 at half the burst's rate: 65
            # frames pass, 65 - 64 / 2 = 33)
            buffer = lo - (lo - 1) * ndr_fps / min(burst_fps, line_fps)
            result["buffer_frames"] = round(buffer, 1)
            rec.measured["b2b_buffer_frames"] = round(buffer, 1)
    if stalled:  # the lengths whose bursts were never back to back: the result is a lower bound
        result["stalled_bursts"] = stalled
    rec.extra["b2b"] = result
    more = f"; of {result['repeats']} repeats {result['lossy_repeats']} lossy" if result.get("repeats") else ""
    buffer_text = f", buffer ~{result['buffer_frames']} frames" if "buffer_frames" in result else ""
    return f"back-to-back {lo} frames ({status}{more}{buffer_text})"


def recovery_test(
    rec: CaseRecord,
    trials: Trials,
    src: TesterEnd,
    dst: TesterEnd,
    size: int,
    ndr_fps: float,
    max_fps: float,
    plan: Plan,
    link: float,
    slow_ns: int,
) -> str:
    """RFC 2544 26.5: 110 % of the throughput, then 50 %; recovery = the last lost frame's time
    after the reduction (0 when loss stopped with it)."""
    over = ndr_fps * OVERLOAD
    if over > max_fps:
        rec.extra["recovery"] = {
            "status": "not applicable: 110 % of the throughput is beyond the line rate or the tester"
        }
        return "recovery not applicable (110 % of the throughput cannot be offered)"
    under = ndr_fps * UNDERLOAD
    n1, n2 = max(2, round(over * plan.overload_s)), max(2, round(under * plan.recovery_s))
    t = trials.add(
        "recovery", run_frames(src, dst, size, [Phase(over, n1), Phase(under, n2)], line_mbps=link, slow_ns=slow_ns)
    )
    runs = t.lost_runs
    last = int(t.receiver["last_lost_seq"]) if int(t.receiver["lost_run_count"]) else None  # type: ignore[call-overload]
    lost_over = sum(min(b, n1 - 1) - a + 1 for a, b in runs if a < n1)
    # the frames after the reduction go at the underload's even gap: the last lost one's offset
    recovery_ms = 0.0 if last is None or last < n1 else (last - n1 + 1) / under * 1000
    rec.extra["recovery"] = {
        "status": "regular" if lost_over else "no loss in the overload",
        "overload_fps": round(over),
        "overload_frames": n1,
        "lost_in_overload": lost_over,
        "underload_fps": round(under),
        "last_lost_seq": last,
        "recovery_ms": round(recovery_ms, 3),
    }
    rec.measured["recovery_ms"] = round(recovery_ms, 3)
    return f"recovery {recovery_ms:.1f} ms ({lost_over} lost in the overload)"


RESTART = frozenset({"restart"})  # the console dialect's feature (hil.console.dialects.capabilities)
NO_RESET = (
    "not measured: the bench cannot reset this DUT (a black box's `reset:` command, or the project's firmware's "
    "console `restart`)"
)


def device_reset(hil: HilContext) -> tuple[str, Callable[[], object], Callable[[], object]] | None:
    """How the bench resets the DUT for RFC 6201, and how it waits for it to be back: a black box's
    `reset:` command; a console that can restart the device (the project's firmware: a board
    reboots, the host firmware executes itself again, its taps and console kept), then its
    console's identity. None: neither (a stock console, a black box without `reset:`)."""
    adapter = hil.dut.adapter
    if getattr(adapter, "can_reset", False):
        return "the bench file's reset command", adapter.reset_device, lambda: None  # type: ignore[attr-defined]
    console, driver = hil.dut.console, hil.dut.driver
    if console is not None and driver is not None and driver.info.not_applicable(RESTART) is None:
        return (
            "the console's restart",
            lambda: console.run_ok("restart", 10),
            lambda: hil.dut.bring_up(driver, hil.recorder),
        )
    return None


TESTER_SHARE_IN_OUTAGE = 0.97  # below this share of the offered rate during the outage, the tester slowed


def reset_test(
    hil: HilContext,
    rec: CaseRecord,
    trials: Trials,
    src: TesterEnd,
    dst: TesterEnd,
    size: int,
    ndr_fps: float,
    plan: Plan,
    link: float,
    slow_ns: int,
) -> str:
    """RFC 6201: frames at the throughput rate, the device reset RESET_AT_S into them; the reset
    time from the frames lost over the offered rate, and from the longest gap at the receiver."""
    how = device_reset(hil)
    if how is None:
        rec.extra["reset"] = {"status": NO_RESET}
        return "reset not measured (no reset the bench can trigger)"
    what, reset, back = how
    failed: list[BaseException] = []

    def trigger() -> None:
        try:
            reset()
        except BaseException as exc:  # raised in the case, below
            failed.append(exc)

    timer = threading.Timer(RESET_AT_S, trigger)
    count = max(2, round(ndr_fps * plan.reset_s))
    timer.start()
    try:
        t = trials.add("reset", run_frames(src, dst, size, [Phase(ndr_fps, count)], line_mbps=link, slow_ns=slow_ns))
    finally:
        timer.join()
    if failed:
        raise failed[0]
    back()  # the DUT answers again (its console, after a restart) before the case goes on
    gap = t.receiver["longest_gap"]
    lost_ms = t.lost / ndr_fps * 1000
    gap_ms = float(gap["ns"]) / 1e6  # type: ignore[index]
    rec.extra["reset"] = {
        "status": "regular" if t.lost else "no frame lost",
        "reset_by": what,
        "offered_fps": round(ndr_fps),
        "frames_lost": t.lost,
        "reset_ms": round(lost_ms, 3),
        "longest_gap_ms": round(gap_ms, 3),
        "gap_after_seq": gap["after_seq"],
        "gap_next_seq": gap["next_seq"],
    }  # type: ignore[index]
    rec.measured["reset_ms"] = round(lost_ms, 3)
    rec.measured["reset_gap_ms"] = round(gap_ms, 3)
    in_gap = int(gap["next_seq"]) - int(gap["after_seq"]) - 1  # type: ignore[index]  # frames sent within the gap
    if t.lost and gap_ms > 0 and in_gap / (gap_ms / 1000) < TESTER_SHARE_IN_OUTAGE * ndr_fps:
        # the tester itself sent slower while the device was down (a busy host): the frames it lost
        # over the offered rate under-count the outage by as much; the longest gap does not depend on it
        fps = in_gap / (gap_ms / 1000)
        rec.extra["reset"]["tester_fps_in_gap"] = round(fps)  # type: ignore[index]
        rec.extra["reset"]["frame_loss_method"] = (  # type: ignore[index]
            f"under-counted: the tester sent {fps:,.0f} frames/s during the outage, "
            f"{100 * (1 - fps / ndr_fps):.1f} % below the offered rate; the longest gap stands"
        )
        return (f"reset {lost_ms:.1f} ms by frames lost (the tester slowed during the outage: under-counted), "
                f"longest gap {gap_ms:.1f} ms")  # fmt: skip
    return f"reset {lost_ms:.1f} ms ({t.lost} frames lost; longest gap {gap_ms:.1f} ms)"
