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
  `reset:` command, the project's firmware's console `restart`): frames at the throughput rate,
  the device reset during them; the frames lost over the offered rate, and the gap between the
  last frame before the reset and the first after.

Before the first case the tester is measured without the device (hil.plumbing.tester_loop: its
two ends joined directly, RFC 9971's recommendation): its ceiling per frame size is the search's
max load, and a throughput within TESTER_MARGIN of it is reported as tester-limited (the device
forwards at least that; the number is the tester's). Every trial records the spacing of the
offered frames as they entered the device.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import allure

from hil.bench_faults import TESTER_MARGIN
from hil.checks import criteria, violations
from hil.directions import direction_name
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.families.sweeps import Axis, axis_points, int_list
from hil.scenarios.metrics import DIRECTION, THROUGHPUT, ScenarioShape
from hil.scenarios.mlr_goals import Measurement
from hil.scenarios.mlrsearch import NDR, PDR, MlrResult, mlr_search
from hil.scenarios.profiles import DEFAULT_PDR_LOSS_PCT
from hil.scenarios.rfc2544_tables import attach_direction_page, case_text, goals_text
from hil.scenarios.rfc2544_tester import Ceiling, tester_ceilings, tester_ends
from hil.scenarios.rfc2544_tests import (
    MAX_STALLED_PCT,
    STALL_ATTEMPTS,
    Trials,
    back_to_back_test,
    latency_test,
    loss_curve_test,
    plan_of,
    recovery_test,
    reset_test,
)
from hil.scenarios.sweep import attach_text, check
from hil.stats import summarize
from hil.traffic.frame_tester import RFC2544_FRAME_SIZES, Phase, frame_mbps, line_rate_fps, run_frames

if TYPE_CHECKING:
    from hil.session import HilContext

SCENARIO = "rfc2544"
TESTS = ("throughput", "latency", "loss", "b2b", "recovery", "reset")
MAX_TRIALS = 12  # the search's safety net; the model paths need at most 6 (benchmarks/capacity_search.py)
AFTER_NDR_TRIALS = 10  # the PDR (said, not gated) gets trials up to this many once the NDR is found
NOT_IN_PATH = (
    "RFC 2544 benchmarks a device that forwards between two ports: a DUT in the path (role in_path); an endpoint "
    "DUT's own throughput is the other families'"
)
NOT_LOCAL = (
    "the frame tester's two ends must be the bench PC's: on a real bench, its bench NIC and its second NIC "
    "(peer.netns) around the DUT, calibrated with the two joined by a cable (the bench file's `tester: "
    "{ceilings: FILE}`, written by `./suite calibrate-tester`)"
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
    "reset_ms",
    "reset_gap_ms",
    "ndr_upper_mbps",
    "ndr_ct_mbps",
    "pdr_upper_mbps",
    "pdr_ct_mbps",
}


def _tests(text: str) -> tuple[object, ...]:
    names = tuple(w.strip() for w in text.split(",") if w.strip())
    wrong = [n for n in names if n not in TESTS]
    if wrong or not names:
        raise ValueError(f"--rfc2544-tests: {', '.join(wrong) or 'none given'}: the tests are {', '.join(TESTS)}")
    if "throughput" not in names:
        names = ("throughput", *names)  # every other test is set from the throughput
    return names


def _slow(text: str) -> tuple[object, ...]:
    values = int_list("--tester-slow-ns", 0, 10_000_000)(text)
    if len(values) != 1:
        raise ValueError(f"--tester-slow-ns takes one value (got {text!r})")
    return values


FRAMES_AXIS = Axis(
    "frame_sizes",
    {"quick": (64, 512, 1518), "full": RFC2544_FRAME_SIZES},
    "--frame-sizes",
    "RFC 2544 frame sizes (bytes, with the FCS) of the rfc2544 family, e.g. 64,1518",
    int_list("--frame-sizes", 64, 1518),
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
    # the NDR against the frame size's line rate (or the tester's calibrated ceiling, tester-limited
    # below it: hil.bench_faults.TESTER_LIMITED); a threshold file sets its own per frame size
    default_limits: ClassVar = {SCENARIO: {"default": {"min_efficiency_pct": 90}}}

    def cases(self, bench: BenchFacts) -> list[Case]:
        """One case per direction and frame size: `rfc2544/downlink-f64` ... `rfc2544/uplink-f1518`."""
        sizes = [int(s) for s in axis_points(FRAMES_AXIS, bench.profile)]  # type: ignore[call-overload]
        tests = tuple(str(t) for t in axis_points(TESTS_AXIS, bench.profile))
        slow = int(axis_points(SLOW_AXIS, bench.profile)[0])  # type: ignore[call-overload]
        skip = NOT_IN_PATH if not bench.in_path else None if bench.local or bench.two_nic_tester else NOT_LOCAL
        if bench.behind is not None:
            skip = (f"the frame tester's two ends are the PC and a peer host's interface: here DUT {bench.behind} "
                    "behind the DUT in the path ends the traffic (its firmware answers no tester frames)")  # fmt: skip
        out = []
        for d in ("dut_rx", "dut_tx"):
            for i, size in enumerate(sizes):
                point = Point(d, size, tests, slow, last=i == len(sizes) - 1)
                out.append(Case(self, f"{SCENARIO}/{direction_name(d, True)}-f{size}", point, skip=skip))
        return out

    def run(self, hil: HilContext, case: Case) -> None:
        run_rfc2544(hil, case.point)  # type: ignore[arg-type]


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
            # gaps (a queue drains in them): measured again
            if t.lost or t.generator_limited or t.stalled_pct <= MAX_STALLED_PCT:
                break  # (a tester short of the load: the search's own repeat)
        sent = frame_mbps(t.achieved_fps, size)
        # stalled every time (a host that keeps taking the tester's core): a trial within the goals'
        # loss vouches only for what the tester did send, never for the load it was asked (a lower
        # bound never overclaims); a tester slowed on purpose (--tester-slow-ns) is late by design,
        # its shortfall the generator-limited stop's
        stalled = (
            t.loss_ratio <= pdr_loss / 100
            and not t.generator_limited
            and not p.slow_ns
            and t.stalled_pct > MAX_STALLED_PCT
        )
        return Measurement(load_mbps, duration_s, sent, sent * (1 - t.loss_ratio), t.loss_ratio, t.generator_limited,
                           counts_at_mbps=sent if stalled else None)  # fmt: skip

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
    _record_throughput(rec, res, ceiling, size)
    tester_limited = stopped_short or (ndr_fps > 0 and ceiling.limited and ndr_fps >= (1 - TESTER_MARGIN) * ceiling.fps)
    rec.extra["tester_limited"] = tester_limited
    if stopped_short:  # the number is the tester's: what it sent, all of it forwarded
        rec.measured["ndr_fps"] = round(ndr_fps)
        rec.measured["ndr_mbps"] = round(frame_mbps(ndr_fps, size), 4)
    said = []
    if ndr_fps > 0:
        if "latency" in p.tests:
            said.append(latency_test(rec, trials, src, dst, size, ndr_fps, plan, link, p.slow_ns))
        if "recovery" in p.tests:
            said.append(recovery_test(rec, trials, src, dst, size, ndr_fps, max_fps, plan, link, p.slow_ns))
        if "reset" in p.tests:
            said.append(reset_test(hil, rec, trials, src, dst, size, ndr_fps, plan, link, p.slow_ns))
    else:
        said.append("latency, recovery and reset not measured: no throughput (the NDR has no lower bound)")
    if "loss" in p.tests:
        said.append(loss_curve_test(rec, trials, src, dst, size, line_fps, max_fps, plan.loss_s, link, p.slow_ns))
    if "b2b" in p.tests:
        said.append(back_to_back_test(rec, trials, src, dst, size, line_fps, ndr_fps, plan, link, p.slow_ns))
    rec.extra["spacing"] = trials.spacing()
    # the most the host stalled the tester in a throughput trial (% of the trial): its precision
    rec.extra["tester_stalled_pct_max"] = round(
        max((t.stalled_pct for test, t in trials.rows if test == "throughput"), default=0.0), 3
    )
    rec.traffic_s = round(sum(t.elapsed_s for _, t in trials.rows), 3)
    durations = (
        f"trials: throughput search as its goals say; latency {plan.latency_s:g} s, loss curve {plan.loss_s:g} s, "
        f"back-to-back bursts {plan.b2b_pause_ms} ms apart, overload {plan.overload_s:g} s then "
        f"{plan.recovery_s:g} s, reset stream {plan.reset_s:g} s"
        + ("" if hil.profile.name == "rfc2544" else " (shorter than RFC 2544's: `--profile rfc2544` runs the RFC's)")
    )
    rec.extra["durations"] = durations
    attach_text(f"{case}: trials", goals_text(res) + "\n" + durations + "\n\n" + trials.table())
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
        attach_direction_page(hil, SCENARIO, named)
    assert len(res.trials) <= MAX_TRIALS, f"the throughput search took more than {MAX_TRIALS} trials: {len(res.trials)}"
    check(hil, SCENARIO, [rec])


def _record_throughput(rec: CaseRecord, res: MlrResult, ceiling: Ceiling, size: int) -> None:
    ndr, pdr = res.goal(NDR), res.goal(PDR)
    at_ndr = [t for load, t in res.counted() if load == ndr.lower_mbps]
    rec.loss_pct = max((100 * t.loss_ratio for t in at_ndr), default=None)
    rec.generator_limited = res.generator_limited
    rec.measured.update(res.bound_metrics())
    for g, key in ((ndr, "ndr"), (pdr, "pdr")):
        if g.lower_mbps is not None:
            rec.measured[f"{key}_fps"] = round(g.lower_mbps * 1e6 / (8 * size))
    rec.measured["tester_fps"] = round(ceiling.fps)
    rec.extra["tester_ceiling_from"] = ceiling.source
    rec.measured["tester_mbps"] = round(frame_mbps(ceiling.fps, size), 4)
    rec.extra.update(
        **res.search_fields(),
        # per trial: the load it counts at (None: a repeat that counts nowhere), sent, loss %, s, short,
        # stalled (the host kept the tester from its rate: it counts at what it sent)
        trial_log=[
            [
                at,
                round(t.sent_mbps, 4),
                round(100 * t.loss_ratio, 4),
                t.duration_s,
                t.generator_limited,
                t.counts_at_mbps is not None,
            ]
            for at, t in zip(res.counted_at, res.trials, strict=True)
        ],
    )
