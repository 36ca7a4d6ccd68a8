"""The UDP rates a path carries without loss and with little, per datagram length and direction:
the no-drop rate (NDR, loss ratio 0) and the partial-drop rate (PDR, the case's max_loss_pct in the
threshold profile, 0.5 % when it gives none) in one search, as RFC 9971 (MLRsearch) defines them
(hil/scenarios/mlr_goals.py: the search goals, load classification, relevant bounds, conditional
throughput; hil/scenarios/mlrsearch.py: which load next), with the generator's achieved rate
checked on every trial. The goals' final trials last the profile's capacity_trial_s (RFC 2544's
60 s in the `rfc2544` profile; 1.5 s in `quick`, 5 s in `full`: shorter than the RFC, said in
every case's title and trial table). The case's number is the PDR's relevant lower bound, the
NDR's and both conditional throughputs beside it. (The thesis found these rates by hand: 64 B 4.1,
100 B 6.4, 500 B 32, 1448 B 90 Mbit/s.)"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import allure

from hil.checks import criteria
from hil.console.dialects.capabilities import NotApplicable
from hil.directions import direction_name
from hil.report.background_charts import attach_chart
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.charts import limit_line, search_chart, sweep_chart
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.families.sweeps import Axis, axis_points, int_list
from hil.scenarios.metrics import DIRECTION, THROUGHPUT, UDP, ScenarioShape
from hil.scenarios.mlr_goals import Bound, Measurement, SearchGoal, classify, relevant_bounds
from hil.scenarios.mlrsearch import NDR, PDR, MlrResult, mlr_search
from hil.scenarios.profiles import DEFAULT_PDR_LOSS_PCT, FULL, QUICK, Profile
from hil.scenarios.sweep import attach_text, check, confirm_miss
from hil.stats import summarize
from hil.theory import frame_rate_fps, udp_frame_bytes, udp_goodput_mbps
from hil.traffic.roles import GENERATOR_TOLERANCE, TrafficResult, TrafficSpec, run_traffic
from hil.wire.spacing import Spacing, spacing_of
from hil.wire.watch import WireSeen

if TYPE_CHECKING:
    from hil.session import HilContext

# The model paths of tests/support/capacity_models.py need at most 6 trials for both goals
# (benchmarks/capacity_search.py). A real path can be noisier than any of them: on a busy 2-core
# host at 64/100-byte datagrams (full profile) the loss wandered between 0.1 and 3 % from trial
# to trial and the generator fell short now and then (each repeat a trial). The cap is a safety
# net, not the target.
MAX_TRIALS = 12
# the NDR is recorded, not gated: once the PDR is found, it gets trials up to this many in all
# (the emulated board loses a few datagrams at any load: its NDR has no lower bound to find)
NDR_TRIALS = 8
RFC2544_TRIAL_S = 60.0
# a stream whose gaps at the DUT's input were this often under half the even gap is said to come
# in clumps (the bench's pacing): RFC 2544 offers evenly spaced frames
CLUMPED_SAY_PCT = 10.0
MARK = {Bound.LOWER: "L", Bound.UPPER: "U", Bound.UNDECIDED: "?"}


def bounds_after_each_trial(res: MlrResult, goal: SearchGoal) -> list[tuple[float | None, float | None]]:
    """The goal's relevant bounds after each trial (a generator's repeat too), replayed from the
    trial log."""
    by_load: dict[float, list[Measurement]] = {}
    out = []
    for load, t in zip(res.counted_at, res.trials, strict=True):
        if load is not None:
            by_load.setdefault(load, []).append(t)
        out.append(relevant_bounds(by_load, goal))
    return out


def trials_table(res: MlrResult, spacings: list[Spacing | None] | None = None) -> str:
    """The goals' attributes, every trial in order with its length, each goal's class of its load
    after it and (with `spacings`, one per trial) the gaps of its datagrams at the DUT's input, and
    each goal's result (Mbit/s)."""
    lines = [g.goal.attributes() for g in res.goals]
    if res.goals and res.goals[0].goal.final_trial_s < RFC2544_TRIAL_S:
        lines.append(
            f"(final trials shorter than RFC 2544's {RFC2544_TRIAL_S:g} s: the run profile's; "
            "`--profile rfc2544` runs the RFC's)"
        )
    names = [g.goal.name for g in res.goals]
    lines.append(
        f"{'#':>2s} {'len s':>5s} {'load':>9s} {'sent':>9s} {'received':>9s} {'loss %':>8s} {'generator':9s} "
        + " ".join(f"{n:>5s}" for n in names)
        + ("  gap us: even median p95 clumped %" if spacings is not None else "")
    )
    by_load: dict[float, list[Measurement]] = {}
    for i, (at, t) in enumerate(zip(res.counted_at, res.trials, strict=True), 1):
        load = t.load_mbps if at is None else at
        if at is not None:
            by_load.setdefault(at, []).append(t)
        marks = " ".join(f"{MARK[classify(by_load[at], g.goal)] if at is not None else 'rep':>5s}" for g in res.goals)
        gaps = ""
        if spacings is not None:
            sp = spacings[i - 1] if i - 1 < len(spacings) else None
            gaps = (
                "  (not captured)"
                if sp is None
                else (f"  {sp.even_gap_us:7.1f} {sp.median_gap_us:7.1f} {sp.p95_gap_us:7.1f} {sp.clumped_pct:7.1f}")
            )
        lines.append(
            f"{i:2d} {t.duration_s:5.2f} {load:9.3f} {t.sent_mbps:9.3f} {t.forwarding_mbps:9.3f} "
            f"{100 * t.loss_ratio:8.4f} {'short' if t.generator_limited else 'ok':9s} {marks}{gaps}"
        )
    lines.append(
        "(L: the load is a lower bound of the goal, U: an upper bound, ?: undecided; "
        "rep: repeated, the generator fell short)"
    )
    if spacings is not None:
        lines.append(
            "(gap: between the offered datagrams where they enter the DUT, from the capture on the generator's side; "
            "even: at the offered rate; clumped: gaps under half the even one)"
        )
    lines += res.result_lines("Mbit/s")
    lines.append(
        f"{len(res.trials)} trials, {res.total_trial_s:.1f} s of traffic"
        + (", generator-limited: the tester's ceiling, not the path's" if res.generator_limited else "")
    )
    return "\n".join(lines)


LENGTHS_AXIS = Axis(
    "capacity_lengths",
    {"quick": QUICK.capacity_lengths, "full": FULL.capacity_lengths},
    "--capacity-lengths",
    "UDP datagram lengths of the capacity search (NDR/PDR), e.g. 64,1448",
    int_list("--capacity-lengths", 16, 1472),
    lambda v: f"l{v}",
    float,
    "datagram length (bytes)",
)


def _lengths(profile: Profile) -> list[int]:
    return [int(n) for n in axis_points(LENGTHS_AXIS, profile)]  # type: ignore[call-overload]


@register
class CapacitySearch:
    name = "loss-free UDP capacity search"
    marker = "capacity"
    marker_doc = "loss-free UDP capacity search"
    shapes = (ScenarioShape("capacity", rf"{DIRECTION}-l\d+", THROUGHPUT | UDP, "dut_rx-l1448"),)

    axes = (LENGTHS_AXIS,)

    def cases(self, bench: BenchFacts) -> list[Case]:
        """One case per direction and datagram length of the run profile (or --capacity-lengths):
        `capacity/dut_rx-l1448` (`capacity/downlink-l1448` through a DUT in the path)."""
        points = [(d, n) for d in ("dut_rx", "dut_tx") for n in _lengths(bench.profile)]
        return [Case(self, f"capacity/{direction_name(d, bench.in_path)}-l{n}", (d, n)) for d, n in points]

    def run(self, hil: HilContext, case: Case) -> None:
        capacity_search(hil, case.point)  # type: ignore[arg-type]


def capacity_search(hil: HilContext, point: tuple[str, int]) -> None:
    """The point's search, recorded, then checked; a miss on a DUT that runs on the bench PC is
    searched once more (--confirm-misses), as every family measures a miss again (clean-clone run
    54: the bridge's uplink PDR at 88.3 % of the line rate on a loaded host, against 90 %)."""
    rec = search(hil, point)
    try:
        check(hil, "capacity", [rec])
    except AssertionError as miss:
        confirm_miss(hil, "capacity", miss, lambda: search(hil, point))


def _stepped_sender(step: float | None, theory: float, named: str) -> str | None:
    """Why a sender that can be asked whole multiples of `step` Mbit/s only cannot run the search
    (None: it can be asked any rate). The search asks rates between any two it tried: such a
    sender would send the nearest whole one, and the rate found would be one it never sent."""
    if step is None:
        return None
    return (
        f"not applicable: the capacity search asks rates between whole Mbit/s, and the sender of {named} is a "
        f"console whose iperf takes whole multiples of {step:g} Mbit/s only ({100 * step / theory:.1f} % of the "
        f"{theory:.2f}-Mbit/s theory): the rate it found would not be one it sent"
    )


def search(hil: HilContext, point: tuple[str, int]) -> CaseRecord:
    """The NDR and PDR search of one direction and datagram length, recorded before any check."""
    direction, length = point
    scenario = "capacity"
    theory = udp_goodput_mbps(hil.link_mbit, length)
    named = hil.direction(direction)
    case = f"{named}-l{length}"
    limits = hil.thresholds.limits(scenario, case)
    pdr_loss = DEFAULT_PDR_LOSS_PCT if limits.max_loss_pct is None else limits.max_loss_pct
    goals = hil.profile.capacity_goals(pdr_loss)
    if (why := _stepped_sender(hil.rate_step(direction), theory, named)) is not None:
        raise NotApplicable(why)
    allure.dynamic.feature("UDP no-drop and partial-drop rates (RFC 9971)")
    allure.dynamic.story(f"capacity {named}")
    allure.dynamic.title(f"capacity/{case}: NDR and PDR (loss <= {pdr_loss:g} %)")
    start = time.time()

    spacings: list[Spacing | None] = []  # per trial: the gaps at the DUT's input (None: not captured)
    senders: list[bool] = []  # per trial: the DUT sent the load itself
    into_dut = _dut_input(hil, direction)

    def trial(load: float, duration_s: float) -> Measurement:
        spec = TrafficSpec("udp", direction, duration_s, length=length, rate_mbps=load)  # type: ignore[arg-type]
        window = hil.wire.window(sides=(into_dut[0],)) if hil.wire is not None and into_dut else None
        r = run_traffic(spec, hil.pc_side, hil.far_end, hil.far_end.generator)
        spacings.append(_spacing(window.close(), into_dut, load, length) if window is not None and into_dut else None)
        senders.append(r.sender_is_dut)
        loss = (r.loss_pct or 0.0) / 100
        if r.sender_is_dut and r.sender_mbps < GENERATOR_TOLERANCE * load:
            # the DUT's own sender fell short: what it did not deliver of the load is its loss, never the bench's
            return Measurement(load, duration_s, r.sender_mbps, r.receiver_mbps, max(loss, undelivered(load, r)), False)
        limited = not r.sender_is_dut and r.sender_mbps < GENERATOR_TOLERANCE * load  # a bench sender: the bench's
        return Measurement(load, duration_s, r.sender_mbps, r.receiver_mbps, loss, limited)

    res = mlr_search(trial, goals, theory, max_trials=MAX_TRIALS, gated=PDR, after_gated_trials=NDR_TRIALS)
    attach_text(f"{case}: trials", trials_table(res, spacings if into_dut else None))
    ndr, pdr = res.goal(NDR), res.goal(PDR)
    found = pdr.lower_mbps or 0.0
    rec = make_record(scenario, case, hil.dut.config.name, summarize([found]), theory)
    at_pdr = [t for load, t in res.counted() if load == pdr.lower_mbps]
    rec.loss_pct = max((100 * t.loss_ratio for t in at_pdr), default=None)
    rec.generator_limited = res.generator_limited
    rec.extra["sender"] = "dut" if any(senders) else "bench"
    rec.traffic_s = round(res.total_trial_s, 3)
    rec.measured.update(res.bound_metrics())
    frame = udp_frame_bytes(length)
    fps = {g.goal.name: round(g.lower_mbps * 1e6 / (8 * length)) for g in res.goals if g.lower_mbps is not None}
    # the spacing of the stream that set the PDR: its last trial at the PDR's relevant lower bound
    at_pdr_spacing = next(
        (sp for at, sp in reversed(list(zip(res.counted_at, spacings, strict=False))) if at == pdr.lower_mbps and sp),
        None,
    )
    if into_dut:
        rec.extra["spacing"] = [None if sp is None else sp.as_fields() for sp in spacings]
        rec.extra["pdr_spacing"] = None if at_pdr_spacing is None else at_pdr_spacing.as_fields()
    rec.extra.update(
        x=length,
        # RFC 2544's units: the frame size (MAC header to FCS) and frames per second
        frame_bytes=frame,
        theory_fps=round(frame_rate_fps(hil.link_mbit, frame)),
        fps=fps,
        **res.search_fields(),
        loss_target_pct=pdr_loss,
        # load, sent, received, loss %, length s, generator short, then each goal's class of the load after it
        trial_log=_trial_log(res),
    )
    hil.recorder.record(rec, start, time.time())
    short = f", {goals[0].final_trial_s:g}-s trials" if goals[0].final_trial_s < RFC2544_TRIAL_S else ""
    ndr_text = "none" if ndr.lower_mbps is None else f"{ndr.lower_mbps:.2f}"
    if not ndr.regular and ndr.status != "max load is a lower bound":  # said, not gated: no threshold checks it
        upper = "" if ndr.upper_mbps is None else f", upper bound {ndr.upper_mbps:.2f}"
        ndr_text += f" ({ndr.status}{upper})"
    frames = f"{fps.get(PDR, 0):,} of {rec.extra['theory_fps']:,} frames/s at {frame} B"
    clumped = at_pdr_spacing is not None and at_pdr_spacing.clumped_pct > CLUMPED_SAY_PCT
    if clumped and at_pdr_spacing and pdr.status != "max load is a lower bound":  # below line rate: the pacing, said
        frames += (
            f"; the bench delivered that stream in clumps ({at_pdr_spacing.clumped_pct:.0f} % of gaps under half the "
            f"even {at_pdr_spacing.even_gap_us:.0f} us): the PDR may be the bench's pacing, not the device's"
        )
    allure.dynamic.title(
        f"capacity/{case}: PDR {found:.2f} Mbit/s (loss <= {pdr_loss:g} %) = {rec.efficiency_pct or 0:.1f} % of "
        f"{theory:.2f} ({frames}), NDR {ndr_text}, in {len(res.trials)} trials{short}; "
        f"{criteria(rec.metrics(), limits)}"
    )
    if length == _lengths(hil.profile)[-1]:
        _attach_direction_charts(hil, named)
    assert len(res.trials) <= MAX_TRIALS, f"capacity search took more than {MAX_TRIALS} trials: {len(res.trials)}"
    return rec


def undelivered(load: float, r: TrafficResult) -> float:
    """The share of an offered load the DUT's own sender did not deliver: a DUT that sends less than
    the load lost that much of it (its shortfall is the measurement, hil.bench_faults)."""
    return max(0.0, 1.0 - r.receiver_mbps / load) if load > 0 else 0.0


def _dut_input(hil: HilContext, direction: str) -> tuple[str, str, str] | None:
    """(capture side, source, destination) of the offered stream where it enters the DUT: the PC's
    side towards the DUT (or towards the peer through it), the peer's side from the peer through a
    DUT in the path; None where the DUT itself generates the stream (or nothing is captured)."""
    if hil.wire is None:
        return None
    near, far = hil.wire.near, hil.wire.far
    if direction == "dut_rx":
        into = ("pc", near, far)
    elif hil.in_path:
        into = ("peer", far, near)
    else:
        return None
    return into if into[0] in hil.wire.running else None  # that side captured in this case


def _spacing(seen: WireSeen, into_dut: tuple[str, str, str], load: float, length: int) -> Spacing | None:
    side, src, dst = into_dut
    summary = seen.summaries.get(side)
    flows = [f for f in summary.udp_flows if (f.src, f.dst) == (src, dst)] if summary is not None else []
    stream = max(flows, key=lambda f: f.datagrams, default=None)
    return spacing_of(stream.times, load, length) if stream is not None else None


def _trial_log(res: MlrResult) -> list[list[object]]:
    """Per trial: load, sent, received, loss %, length s, generator short, then per goal [class of
    the load after it ("rep": a trial the generator's repeat replaced, counted nowhere), relevant
    lower bound, relevant upper bound]."""
    by_load: dict[float, list[Measurement]] = {}
    log: list[list[object]] = []
    bounds = {g.goal.name: bounds_after_each_trial(res, g.goal) for g in res.goals}
    for i, (at, t) in enumerate(zip(res.counted_at, res.trials, strict=True)):
        if at is not None:
            by_load.setdefault(at, []).append(t)
        row: list[object] = [round(t.load_mbps if at is None else at, 4), round(t.sent_mbps, 3),
                             round(t.forwarding_mbps, 3), round(100 * t.loss_ratio, 4), t.duration_s,
                             t.generator_limited]  # fmt: skip
        for g in res.goals:
            lo, hi = bounds[g.goal.name][i]
            row.append(["rep" if at is None else MARK[classify(by_load[at], g.goal)], lo, hi])
        log.append(row)
    return log


def _attach_direction_charts(hil: HilContext, direction: str) -> None:
    """The direction's (as case ids name it) lengths measured in this run: the PDR and NDR against
    length, and every search's trials with the PDR's bounds (from the records' trial logs)."""
    records = sorted(hil.recorder.latest("capacity", f"{direction}-"), key=lambda r: float(r.extra["x"]))  # type: ignore[arg-type]
    targets = sorted({float(r.extra["loss_target_pct"]) for r in records})  # type: ignore[arg-type]
    bounds = [(float(r.extra["x"]), hil.thresholds.limits("capacity", r.case).bounds()) for r in records]  # type: ignore[arg-type]
    pdr = f"PDR (loss <= {'/'.join(f'{x:g}' for x in targets)} %)"
    ndr = [(float(r.extra["x"]), r.measured["ndr_mbps"]) for r in records if "ndr_mbps" in r.measured]  # type: ignore[arg-type]
    attach_chart(
        f"capacity {direction}: NDR and PDR vs length",
        sweep_chart,
        f"UDP {direction}: no-drop and partial-drop rates (RFC 9971)",
        "datagram length (bytes)",
        {pdr: [(float(r.extra["x"]), r.median) for r in records], "NDR (no loss)": ndr},  # type: ignore[arg-type]
        theory=[(float(r.extra["x"]), r.theory or 0.0) for r in records],  # type: ignore[arg-type]
        threshold=limit_line(bounds, "min", "mbps"),
        min_efficiency=limit_line(bounds, "min", "efficiency_pct"),
    )
    panels = {  # the PDR's: a trial that lost no more than its loss ratio passed
        f"{r.extra['x']} B": [
            (t[0], t[3] <= float(r.extra["loss_target_pct"]) and not t[5], t[7][1] or 0.0, t[7][2] or r.theory or t[0])  # type: ignore[index,arg-type]
            for t in r.extra["trial_log"]  # type: ignore[attr-defined]
        ]
        for r in records
    }
    found = {f"{r.extra['x']} B": (r.median if r.median > 0 else None) for r in records}
    loss_targets = {f"{r.extra['x']} B": float(r.extra["loss_target_pct"]) for r in records}  # type: ignore[arg-type]
    attach_chart(
        f"capacity {direction}: trials and bounds",
        search_chart,
        f"UDP {direction}: offered load per trial, the PDR's relevant bounds after it",
        panels,
        found,
        loss_target_pct=loss_targets,
    )
