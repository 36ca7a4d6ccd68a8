"""RFC 2544 (benchmarking methodology for network interconnect devices) for a DUT in the path, per
frame size and direction, with the project's own frame tester (tester/frametester.c: numbered,
time-stamped IPv4/UDP frames, evenly spaced, never closer than the medium's line-rate gap):

* throughput (RFC 2544 26.1): the no-drop rate, found with RFC 9971's search (hil.scenarios.
  mlrsearch) together with a partial-drop rate; in frames/s and Mbit/s of the frames against the
  medium's theoretical frame rate (148,810 frames/s at 64 B on 100 Mbit/s);
* latency (26.2) at the throughput rate, and at 10/50/90 % of it as FD.io CSIT measures it:
  one-way, from the tester's send and receive times (both ends on one host clock), percentiles;
* the frame loss rate curve (26.3): from 100 % of the line rate down in 10 % steps until two
  successive trials lose nothing;
* back-to-back frames (26.4): the longest burst at the line rate's minimum gap that the device
  forwards without loss, confirmed over repeated bursts, and the buffer it implies (the burst's
  frames the device could not forward at its throughput while the burst arrived);
* system recovery (26.5): 110 % of the throughput, then 50 %: the time from the reduction to the
  last frame lost;
* reset time (RFC 6201, which replaces 26.6), where the bench can reset the device (a black box's
  `reset:` command): frames at the throughput rate, the device reset during them; the frames lost
  over the offered rate, and the gap between the last frame before the reset and the first after.

Before the first case the tester is measured without the device (hil.plumbing.tester_loop: its
two ends joined directly, RFC 9971's recommendation): its ceiling per frame size is the search's
max load, and a throughput within TESTER_MARGIN of it is reported as tester-limited (the device
forwards at least that; the number is the tester's). Every trial records the spacing of the
offered frames as they entered the device.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import allure

from hil.checks import criteria, violations
from hil.directions import direction_name
from hil.plumbing.in_path import PC_IF, PEER_IF, InPathTopology
from hil.plumbing.tester_loop import TesterLoop
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.charts import sweep_chart
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.families.sweeps import Axis, axis_points
from hil.scenarios.metrics import DIRECTION, THROUGHPUT, ScenarioShape
from hil.scenarios.mlr_goals import Measurement
from hil.scenarios.mlrsearch import NDR, PDR, MlrResult, mlr_search
from hil.scenarios.profiles import DEFAULT_PDR_LOSS_PCT, Profile
from hil.scenarios.sweep import attach_png, attach_text, check
from hil.stats import summarize
from hil.traffic.frame_tester import (
    RFC2544_FRAME_SIZES,
    FrameTrial,
    Phase,
    TesterEnd,
    frame_mbps,
    line_rate_fps,
    run_frames,
)
from hil.traffic.roles import GENERATOR_TOLERANCE

if TYPE_CHECKING:
    from hil.session import HilContext

SCENARIO = "rfc2544"
TESTS = ("throughput", "latency", "loss", "b2b", "recovery", "reset")
MAX_TRIALS = 12  # the search's safety net; the model paths need at most 6 (benchmarks/capacity_search.py)
AFTER_NDR_TRIALS = 10  # the PDR (said, not gated) gets trials up to this many once the NDR is found
TESTER_MARGIN = 0.03  # a throughput within 3 % of the tester's own ceiling is the tester's number
CALIBRATION_TRIALS = 2  # the tester's ceiling: the best of these trials at the line rate
LATENCY_LOADS = (0.1, 0.5, 0.9, 1.0)  # shares of the throughput (CSIT's 10/50/90 % of NDR, and RFC 2544's 100 %)
LOSS_STEP = 0.1  # the frame loss rate curve's steps, of the line rate
OVERLOAD, UNDERLOAD = 1.1, 0.5  # system recovery: 110 % of the throughput, then 50 %
MAX_STALLED_PCT = 0.2  # a loss-free throughput trial stalled longer than this share is measured again
STALL_ATTEMPTS = 2
B2B_FIRST = 16  # the back-to-back search's first burst (frames); it doubles from there
B2B_ATTEMPTS = 3  # a burst the host stalled the tester in is sent again, up to this many times in all
B2B_STEPS_DOWN = 3  # confirmations one frame shorter after a lossy repeat
RESET_AT_S = 0.3  # RFC 6201: the reset is triggered this long into the stream
NOT_IN_PATH = (
    "RFC 2544 benchmarks a device that forwards between two ports: a DUT in the path (role in_path); an endpoint "
    "DUT's own throughput is the other families'"
)
NOT_LOCAL = (
    "the frame tester's ends are the virtual bench's own namespaces; a DUT in the path on a real bench needs "
    "them on the bench PC's two NICs (not supported yet)"
)
METRICS = THROUGHPUT | {
    "loss_pct",
    "ndr_mbps",
    "ndr_fps",
    "pdr_mbps",
    "pdr_fps",
    "tester_mbps",
    "tester_fps",
    "latency_p50_ms",
    "latency_p99_ms",
    "loss_at_line_pct",
    "b2b_frames",
    "b2b_buffer_frames",
    "recovery_ms",
}


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


PLANS = {
    # short trials, said in every case's trial table: `--profile rfc2544` runs the RFC's
    "quick": Plan(
        latency_s=0.5,
        loss_s=0.5,
        b2b_repeats=5,
        b2b_pause_ms=100,
        b2b_longest_s=0.25,
        overload_s=0.5,
        recovery_s=0.5,
        reset_s=1.0,
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
    ),
}


def plan_of(profile: Profile) -> Plan:
    return PLANS.get(profile.name) or PLANS[profile.points_name]


def _sizes(text: str) -> tuple[object, ...]:
    out = []
    for word in (w.strip() for w in text.split(",") if w.strip()):
        if not word.isdigit() or not 64 <= int(word) <= 1518:
            raise ValueError(f"--frame-sizes: {word!r} is not an Ethernet frame size in bytes (64..1518)")
        out.append(int(word))
    if not out:
        raise ValueError("--frame-sizes: give at least one frame size, e.g. 64,1518")
    return tuple(out)


def _tests(text: str) -> tuple[object, ...]:
    names = tuple(w.strip() for w in text.split(",") if w.strip())
    wrong = [n for n in names if n not in TESTS]
    if wrong or not names:
        raise ValueError(f"--rfc2544-tests: {', '.join(wrong) or 'none given'}: the tests are {', '.join(TESTS)}")
    if "throughput" not in names:
        names = ("throughput", *names)  # every other test is set from the throughput
    return names


def _slow(text: str) -> tuple[object, ...]:
    if not text.strip().isdigit() or int(text) > 10_000_000:
        raise ValueError(f"--tester-slow-ns: {text!r} is not a whole number of nanoseconds (0..10000000)")
    return (int(text),)


FRAMES_AXIS = Axis(
    "frame_sizes",
    {"quick": (64, 512, 1518), "full": RFC2544_FRAME_SIZES},
    "--frame-sizes",
    "RFC 2544 frame sizes (bytes, with the FCS) of the rfc2544 family, e.g. 64,1518",
    _sizes,
    lambda v: f"f{v}",
    float,
    "frame size (bytes)",
)
TESTS_AXIS = Axis(
    "rfc2544_tests",
    {"quick": TESTS, "full": TESTS},
    "--rfc2544-tests",
    f"the RFC 2544 tests to run per frame size ({', '.join(TESTS)}; throughput always)",
    _tests,
    str,
    lambda v: 0.0,
    "test",
)
SLOW_AXIS = Axis(
    "tester_slow_ns",
    {"quick": (0,), "full": (0,)},
    "--tester-slow-ns",
    "nanoseconds the frame tester's sender spends more per frame: a deliberately slowed generator",
    _slow,
    str,
    float,
    "ns",
)


@dataclass(frozen=True)
class Point:
    direction: str  # dut_rx (downlink: PC -> peer) or dut_tx (uplink)
    frame_bytes: int
    tests: tuple[str, ...]
    slow_ns: int
    last: bool  # the direction's last frame size: it carries the RFC 2544 tables


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


@register
class Rfc2544:
    name = "RFC 2544 (device in the path)"
    marker = "rfc2544"
    marker_doc = (
        "RFC 2544 for a DUT in the path with the project's frame tester: throughput (RFC 9971 NDR/PDR), latency, "
        "frame loss rate, back-to-back frames, system recovery, per frame size"
    )
    shapes = (ScenarioShape(SCENARIO, rf"{DIRECTION}-f\d+", METRICS, "downlink-f64"),)
    axes = (FRAMES_AXIS, TESTS_AXIS, SLOW_AXIS)
    default_limits: ClassVar = {SCENARIO: {"default": {"min_efficiency_pct": 50}}}

    def cases(self, bench: BenchFacts) -> list[Case]:
        """One case per direction and frame size: `rfc2544/downlink-f64` ... `rfc2544/uplink-f1518`."""
        sizes = [int(s) for s in axis_points(FRAMES_AXIS, bench.profile)]  # type: ignore[call-overload]
        tests = tuple(str(t) for t in axis_points(TESTS_AXIS, bench.profile))
        slow = int(axis_points(SLOW_AXIS, bench.profile)[0])  # type: ignore[call-overload]
        skip = NOT_IN_PATH if not bench.in_path else None if bench.local else NOT_LOCAL
        out = []
        for d in ("dut_rx", "dut_tx"):
            for i, size in enumerate(sizes):
                point = Point(d, size, tests, slow, last=i == len(sizes) - 1)
                out.append(Case(self, f"{SCENARIO}/{direction_name(d, True)}-f{size}", point, skip=skip))
        return out

    def run(self, hil: HilContext, case: Case) -> None:
        run_rfc2544(hil, case.point)  # type: ignore[arg-type]


def tester_ends(hil: HilContext, direction: str) -> tuple[TesterEnd, TesterEnd]:
    """(sender, receiver): the PC's and the peer's interfaces on the virtual in-path bench."""
    topo = hil.topology
    assert isinstance(topo, InPathTopology)
    pc = TesterEnd("PC", tuple(topo.exec_prefix(topo.pc_ns)), PC_IF, hil.pc_side.ip)
    peer = TesterEnd("peer", tuple(topo.exec_prefix(topo.peer_ns)), PEER_IF, hil.far_end.ip)
    return (pc, peer) if direction == "dut_rx" else (peer, pc)


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
                    count = max(2, round(line * hil.profile.capacity_trial_s))
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
            f"{'achieved':>10s} {'stall %':>7s} {'lat p50 us':>10s} {'p99':>8s}  gap us: even median p5 p95 clumped %"
        ]
        for i, (test, t) in enumerate(self.rows, 1):
            sp = t.spacing_fields()
            lat = t.latency_us
            rate = f"{t.achieved_fps:10.0f}" if len(t.phases) == 1 and t.sender.get("repeat") == 1 else f"{'-':>10s}"
            lines.append(
                f"{i:3d} {test:10s} {t.offered_fps:11.0f} {t.sent:9d} {t.received:9d} {100 * t.loss_ratio:8.4f} "
                f"{rate} {t.stalled_pct:7.3f} {lat['p50']:10.1f} {lat['p99']:8.1f}  {sp['even_gap_us']:7.2f} "
                f"{sp['median_gap_us']:7.2f} {sp['p5_gap_us']:7.2f} {sp['p95_gap_us']:7.2f} {sp['clumped_pct']:7.2f}"
                + ("  tester short" if t.generator_limited else "")
            )
        lines.append(
            "(gap: between consecutive offered frames as they entered the DUT's port, from the tester's send times; "
            "even: at the offered rate; clumped: under half the even gap. Stall: the share of the trial the host "
            "kept the tester from sending; a loss-free throughput trial stalled over "
            f"{MAX_STALLED_PCT:g} % is measured again. Latency: one-way, send to receive.)"
        )
        return "\n".join(lines)

    def spacing(self) -> list[dict[str, object]]:
        return [{"test": test, **t.spacing_fields()} for test, t in self.rows]


def run_rfc2544(hil: HilContext, p: Point) -> None:
    size, link = p.frame_bytes, hil.link_mbit
    named = hil.direction(p.direction)
    case = f"{named}-f{size}"
    limits = hil.thresholds.limits(SCENARIO, case)
    pdr_loss = DEFAULT_PDR_LOSS_PCT if limits.max_loss_pct is None else limits.max_loss_pct
    plan = plan_of(hil.profile)
    allure.dynamic.feature("RFC 2544")
    allure.dynamic.story(f"RFC 2544 {named}")
    allure.dynamic.title(f"rfc2544/{case}")
    start = time.time()
    sizes = [int(s) for s in axis_points(FRAMES_AXIS, hil.profile)]  # type: ignore[call-overload]
    ceiling = tester_ceilings(hil, sorted({*sizes, size}), p.slow_ns)[size]
    src, dst = tester_ends(hil, p.direction)
    line_fps = line_rate_fps(link, size)
    max_fps = min(line_fps, ceiling.fps)
    trials = Trials()

    def trial(load_mbps: float, duration_s: float) -> Measurement:
        """One trial at the load (the frames evenly spaced at it: a host stall leaves a gap, and
        the rate sent, in the trial table, is a little less; below the generator tolerance the
        trial is the tester's shortfall)."""
        fps = load_mbps * 1e6 / (8 * size)
        for _ in range(STALL_ATTEMPTS):
            t = trials.add(
                "throughput",
                run_frames(
                    src, dst, size, [Phase(fps, max(2, round(fps * duration_s)))], line_mbps=link, slow_ns=p.slow_ns
                ),
            )
            # a loss-free trial the host stalled the tester in for long may owe its pass to the
            # gaps (a queue drains in them): measured again, the last one counts
            if t.lost or t.generator_limited or t.stalled_pct <= MAX_STALLED_PCT:
                break  # (a tester short of the load: the search's own repeat)
        sent = frame_mbps(t.achieved_fps, size)
        return Measurement(load_mbps, duration_s, sent, sent * (1 - t.loss_ratio), t.loss_ratio, t.generator_limited)

    goals = hil.profile.capacity_goals(pdr_loss)
    res = mlr_search(
        trial,
        goals,
        frame_mbps(max_fps, size),
        max_trials=MAX_TRIALS,
        gated=NDR,
        after_gated_trials=AFTER_NDR_TRIALS,
        count_short_lossy=True,
    )
    ndr = res.goal(NDR)
    ndr_fps = (ndr.lower_mbps or 0.0) * 1e6 / (8 * size)
    # the tester fell short of its own ceiling and the DUT lost nothing of what it did send: the
    # DUT forwards at least that (the tester's number, not the DUT's)
    short_clean = [t.sent_mbps for t in res.trials if t.generator_limited and t.loss_ratio == 0]
    stopped_short = ndr.lower_mbps is None and res.generator_limited and bool(short_clean)
    if stopped_short:
        ndr_fps = max(short_clean) * 1e6 / (8 * size)
    rec = make_record(
        SCENARIO, case, hil.dut.config.name, summarize([frame_mbps(ndr_fps, size)]), frame_mbps(line_fps, size)
    )
    rec.extra.update(x=size, frame_bytes=size, theory_fps=round(line_fps), direction=named, tests=list(p.tests))
    _record_throughput(rec, res, ceiling, ndr_fps, size)
    tester_limited = stopped_short or (ndr_fps > 0 and ceiling.limited and ndr_fps >= (1 - TESTER_MARGIN) * ceiling.fps)
    rec.extra["tester_limited"] = tester_limited
    if stopped_short:  # the number is the tester's: what it sent, all of it forwarded
        rec.measured["ndr_fps"] = round(ndr_fps)
        rec.measured["ndr_mbps"] = round(frame_mbps(ndr_fps, size), 4)
    said = []
    if ndr_fps > 0:
        if "latency" in p.tests:
            said.append(_latency(rec, trials, src, dst, size, ndr_fps, plan, link, p.slow_ns))
        if "recovery" in p.tests:
            said.append(_recovery(rec, trials, src, dst, size, ndr_fps, max_fps, plan, link, p.slow_ns))
        if "reset" in p.tests:
            said.append(_reset(hil, rec, trials, src, dst, size, ndr_fps, plan, link, p.slow_ns))
    else:
        said.append("latency and recovery not measured: no throughput (the NDR has no lower bound)")
    if "loss" in p.tests:
        said.append(_loss_curve(rec, trials, src, dst, size, line_fps, max_fps, plan.loss_s, link, p.slow_ns))
    if "b2b" in p.tests:
        said.append(_back_to_back(rec, trials, src, dst, size, line_fps, ndr_fps, plan, link, p.slow_ns))
    rec.extra["spacing"] = trials.spacing()
    rec.traffic_s = round(sum(t.elapsed_s for _, t in trials.rows), 3)
    durations = (
        f"trials: throughput search as its goals say; latency {plan.latency_s:g} s, loss curve {plan.loss_s:g} s, "
        f"back-to-back bursts {plan.b2b_pause_ms} ms apart, overload {plan.overload_s:g} s then "
        f"{plan.recovery_s:g} s, reset stream {plan.reset_s:g} s"
        + ("" if hil.profile.name == "rfc2544" else " (shorter than RFC 2544's: `--profile rfc2544` runs the RFC's)")
    )
    attach_text(f"{case}: trials", _goals_text(res) + "\n" + durations + "\n\n" + trials.table())
    attach_text(f"{case}: RFC 2544", case_text(rec))
    hil.recorder.record(rec, start, time.time())
    found = violations(rec.metrics(), limits, rec.theory)
    # the tester could not offer enough to judge the DUT: a bench fault; a tester-limited number
    # that meets the limits passes (the DUT forwards at least that)
    rec.generator_limited = tester_limited and bool(found)
    fps_text = f"{ndr_fps:,.0f} of {line_fps:,.0f} frames/s" if ndr_fps > 0 else f"no NDR: {ndr.status}"
    tester_text = (
        (f"; tester-limited: the tester's own ceiling is {ceiling.fps:,.0f} frames/s, the DUT forwards at least this")
        if tester_limited
        else ""
    )
    allure.dynamic.title(
        f"rfc2544/{case}: throughput {rec.median:.2f} Mbit/s ({fps_text}, {rec.efficiency_pct or 0:.1f} %)"
        f"{tester_text}; {'; '.join(s for s in said if s)}; {criteria(rec.metrics(), limits)}"
    )
    if p.last:
        _attach_direction_page(hil, named)
    assert len(res.trials) <= MAX_TRIALS, f"the throughput search took more than {MAX_TRIALS} trials: {len(res.trials)}"
    check(hil, SCENARIO, [rec])


def _record_throughput(rec: CaseRecord, res: MlrResult, ceiling: Ceiling, ndr_fps: float, size: int) -> None:
    ndr, pdr = res.goal(NDR), res.goal(PDR)
    at_ndr = [t for load, t in res.counted() if load == ndr.lower_mbps]
    rec.loss_pct = max((100 * t.loss_ratio for t in at_ndr), default=None)
    rec.generator_limited = res.generator_limited
    for g, key in ((ndr, "ndr"), (pdr, "pdr")):
        for what, value in (("mbps", g.lower_mbps), ("upper_mbps", g.upper_mbps), ("ct_mbps", g.conditional_mbps)):
            if value is not None:
                rec.measured[f"{key}_{what}"] = round(value, 4)
        if g.lower_mbps is not None:
            rec.measured[f"{key}_fps"] = round(g.lower_mbps * 1e6 / (8 * size))
    rec.measured["tester_fps"] = round(ceiling.fps)
    rec.measured["tester_mbps"] = round(frame_mbps(ceiling.fps, size), 4)
    rec.extra.update(
        trials=len(res.trials),
        trial_s=round(res.total_trial_s, 3),
        goals={g.goal.name: g.goal.attributes() for g in res.goals},
        results={
            g.goal.name: {
                "status": g.status,
                "lower_mbps": g.lower_mbps,
                "upper_mbps": g.upper_mbps,
                "conditional_mbps": g.conditional_mbps,
            }
            for g in res.goals
        },
        # per trial: the load it counts at (None: a repeat that counts nowhere), sent, loss %, s, short
        trial_log=[
            [at, round(t.sent_mbps, 4), round(100 * t.loss_ratio, 4), t.duration_s, t.generator_limited]
            for at, t in zip(res.counted_at, res.trials, strict=True)
        ],
    )


def _goals_text(res: MlrResult) -> str:
    lines = [g.goal.attributes() for g in res.goals]
    fmt = lambda v: "none" if v is None else f"{v:.3f}"  # noqa: E731
    for g in res.goals:
        lines.append(
            f"{g.goal.name}: relevant lower bound {fmt(g.lower_mbps)}, upper bound {fmt(g.upper_mbps)}, conditional "
            f"throughput {fmt(g.conditional_mbps)} Mbit/s of frames ({g.status})"
        )
    lines.append(
        f"{len(res.trials)} search trials, {res.total_trial_s:.1f} s of traffic"
        + (", generator-limited: the tester fell short of the load" if res.generator_limited else "")
    )
    return "\n".join(lines)


def _latency(
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


def _loss_curve(
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


def _back_to_back(
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

    def burst(n: int, repeat: int = 1) -> FrameTrial:
        """Bursts of n frames at the line rate; one the host stalled the tester in (a gap in the
        burst: it was not back to back) is sent again, up to B2B_ATTEMPTS times."""
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
            if t.resyncs == 0:
                break
        return t

    def lossy_bursts(t: FrameTrial, n: int) -> int:
        return len({i for a, b in t.lost_runs for i in range(a // n, b // n + 1)})

    longest = max(2, round(line_fps * plan.b2b_longest_s))
    # the longest burst first (a device that forwards at the line rate is done); after a loss,
    # bursts that double from B2B_FIRST frames until one loses, then bisection between the last
    # loss-free length and the first lossy one
    searched = [(longest, burst(longest).lost)]
    lo, hi = 0, 0
    if searched[0][1]:
        hi = longest
        n = min(B2B_FIRST, longest - 1)
        while n < hi:
            searched.append((n, burst(n).lost))
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
            lost = burst(mid).lost
            searched.append((mid, lost))
            lo, hi = (mid, hi) if lost == 0 else (lo, mid)
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
        if status == "regular" and 0 < ndr_fps < GENERATOR_TOLERANCE * line_fps:
            # the DUT forwards slower than the burst arrives: what it held is the buffer
            buffer = lo * (1 - ndr_fps / min(burst_fps, line_fps))
            result["buffer_frames"] = round(buffer, 1)
            rec.measured["b2b_buffer_frames"] = round(buffer, 1)
    rec.extra["b2b"] = result
    more = f"; of {result['repeats']} repeats {result['lossy_repeats']} lossy" if result.get("repeats") else ""
    buffer_text = f", buffer ~{result['buffer_frames']} frames" if "buffer_frames" in result else ""
    return f"back-to-back {lo} frames ({status}{more}{buffer_text})"


def _recovery(
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


def _reset(
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
    adapter = hil.dut.adapter
    if not getattr(adapter, "can_reset", False):
        rec.extra["reset"] = {"status": "not measured: the bench cannot reset this DUT (a black box's `reset:`)"}
        return "reset not measured (no reset the bench can trigger)"
    failed: list[BaseException] = []

    def trigger() -> None:
        try:
            adapter.reset_device()  # type: ignore[attr-defined]
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
    gap = t.receiver["longest_gap"]
    lost_ms = t.lost / ndr_fps * 1000
    gap_ms = float(gap["ns"]) / 1e6  # type: ignore[index]
    rec.extra["reset"] = {
        "status": "regular" if t.lost else "no frame lost",
        "offered_fps": round(ndr_fps),
        "frames_lost": t.lost,
        "reset_ms": round(lost_ms, 3),
        "longest_gap_ms": round(gap_ms, 3),
        "gap_after_seq": gap["after_seq"],
        "gap_next_seq": gap["next_seq"],
    }  # type: ignore[index]
    rec.measured["reset_ms"] = round(lost_ms, 3)
    rec.measured["reset_gap_ms"] = round(gap_ms, 3)
    return f"reset {lost_ms:.1f} ms ({t.lost} frames lost; longest gap {gap_ms:.1f} ms)"


def case_text(rec: CaseRecord) -> str:
    """The case's RFC 2544 figures as the RFC's report tables."""
    m, x = rec.measured, rec.extra
    lines = [
        f"frame size {x['frame_bytes']} B, {x['direction']}; line rate {x['theory_fps']:,} frames/s "
        f"({rec.theory:.2f} Mbit/s of frames); the tester alone {m['tester_fps']:,} frames/s",
        f"throughput (NDR) {m.get('ndr_fps', 0):,} frames/s = {rec.median:.3f} Mbit/s = "
        f"{rec.efficiency_pct or 0:.2f} % of the line rate" + ("  (tester-limited)" if x.get("tester_limited") else ""),
        f"PDR {m.get('pdr_fps', '-')} frames/s; {x['trials']} search trials",
    ]
    if "latency" in x:
        lines.append(
            f"{'load':>6s} {'fps':>9s} {'loss %':>8s} {'min':>8s} {'p50':>8s} {'p90':>8s} {'p99':>8s} "
            f"{'max':>8s}  one-way latency, us"
        )
        for r in x["latency"]:  # type: ignore[attr-defined]
            lines.append(
                f"{r['share_pct']:5d}% {r['fps']:9d} {r['loss_pct']:8.4f} {r['min_us']:8.1f} {r['p50_us']:8.1f} "
                f"{r['p90_us']:8.1f} {r['p99_us']:8.1f} {r['max_us']:8.1f}"
            )
    if "loss_curve" in x:
        lines.append(
            "frame loss rate: "
            + ", ".join(
                f"{r['share_pct']} %: {r['loss_pct']} %" + (" (tester short)" if r["tester_short"] else "")
                for r in x["loss_curve"]  # type: ignore[attr-defined]
            )
        )
    if "b2b" in x:
        b = x["b2b"]
        lines.append(
            f"back-to-back: {b['frames']} frames ({b['status']}); repeats {b.get('repeats', 0)}, lossy "  # type: ignore[index]
            f"{b.get('lossy_repeats', 0)}; buffer {b.get('buffer_frames', '-')} frames; the bursts left at "
            f"{b.get('burst_fps', '-')} frames/s"
        )  # type: ignore[union-attr]
    if "reset" in x:
        r = x["reset"]
        lines.append(
            f"reset (RFC 6201): {r.get('reset_ms', '-')} ms from the frames lost, {r.get('longest_gap_ms', '-')} "  # type: ignore[union-attr]
            f"ms the longest gap ({r['status']})"
        )  # type: ignore[index]
    if "recovery" in x:
        r = x["recovery"]
        lines.append(f"system recovery: {r.get('recovery_ms', '-')} ms ({r['status']})")  # type: ignore[index,union-attr]
    return "\n".join(lines)


def _attach_direction_page(hil: HilContext, direction: str) -> None:
    """The direction's RFC 2544 tables over every frame size of the run, and its chart."""
    records = sorted(hil.recorder.latest(SCENARIO, f"{direction}-"), key=lambda r: int(r.extra["frame_bytes"]))  # type: ignore[call-overload]
    if not records:
        return
    head = (
        f"{'frame B':>7s} {'line fps':>9s} {'tester fps':>10s} {'NDR fps':>9s} {'Mbit/s':>8s} {'eff %':>6s} "
        f"{'PDR fps':>9s} {'lat p50 us':>10s} {'p99':>7s} {'loss@line %':>11s} {'b2b':>7s} {'buffer':>7s} "
        f"{'recov ms':>8s} {'reset ms':>8s}"
    )
    lines = [
        f"RFC 2544, {direction}: throughput, latency at it, frame loss at the line rate, back-to-back, recovery",
        head,
    ]
    for r in records:
        m = r.measured
        lat = {row["share_pct"]: row for row in r.extra.get("latency", [])}.get(100, {})  # type: ignore[union-attr,attr-defined]
        lines.append(
            f"{r.extra['frame_bytes']:7d} {r.extra['theory_fps']:9,d} {m['tester_fps']:10,.0f} "
            f"{m.get('ndr_fps', 0):9,.0f} "
            f"{r.median:8.3f} {r.efficiency_pct or 0:6.1f} {m.get('pdr_fps', 0):9,.0f} {lat.get('p50_us', '-'):>10} "
            f"{lat.get('p99_us', '-'):>7} {m.get('loss_at_line_pct', '-'):>11} {m.get('b2b_frames', '-'):>7} "
            f"{m.get('b2b_buffer_frames', '-'):>7} {m.get('recovery_ms', '-'):>8} {m.get('reset_ms', '-'):>8}"
            + ("  tester-limited" if r.extra.get("tester_limited") else "")
        )
    attach_text(f"RFC 2544 {direction}: every frame size", "\n".join(lines))
    attach_png(
        f"RFC 2544 {direction}: throughput vs frame size",
        sweep_chart(
            f"RFC 2544 throughput {direction} (NDR), the tester's own ceiling",
            "frame size (bytes)",
            {
                "throughput (NDR)": [(float(r.extra["frame_bytes"]), r.median) for r in records],  # type: ignore[arg-type]
                "the tester without the DUT": [
                    (float(r.extra["frame_bytes"]), float(r.measured["tester_mbps"])) for r in records
                ],
            },  # type: ignore[arg-type]
            theory=[(float(r.extra["frame_bytes"]), r.theory or 0.0) for r in records],  # type: ignore[arg-type]
            ylabel="Mbit/s of frames",
            theory_label="line rate",
        ),
    )
