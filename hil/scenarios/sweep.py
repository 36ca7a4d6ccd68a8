"""Measuring one point of a scenario: repetitions, evidence, a record written before any check;
then checking a whole sweep against its thresholds at once. `check` is the one checker every
scenario's records go through: limits per metric name, generator shortfalls as bench faults."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import allure

from hil.bench_faults import (
    GENERATOR_SHORT,
    GENERATOR_TOLERANCE,
    TESTER_LIMITED,
    BenchProof,
    generator_short,
    limited_by_tester,
)
from hil.checks import (
    BELOW_THRESHOLD,
    REGRESSION,
    BenchFault,
    Regression,
    case_title,
    generator_shortfall,
    headline,
    violations,
)
from hil.results.baseline import compare
from hil.results.dut_side import WHAT as DUT_SIDE_WHAT
from hil.results.dut_side import dut_side
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.rfc6349 import TcpFigures
from hil.scenarios.tcp_watch import DEFAULT_SEGMENT, TcpWatch, segment_of
from hil.stats import summarize
from hil.step_clock import timed
from hil.theory import tcp_goodput_mbps
from hil.traffic.roles import TrafficResult, TrafficSpec, run_traffic
from hil.wire.ledger import loss_ledger
from hil.wire.reading import mss_reading

if TYPE_CHECKING:
    from hil.session import HilContext
    from hil.wire.watch import WireSeen


@dataclass
class Point:
    """One point of a sweep: what flows, what it is called, what the link allows."""

    case: str  # threshold key and record name, e.g. "dut_rx-w32K"
    spec: TrafficSpec
    theory_mbps: float | None  # None on an unshaped link: no line rate to compare with
    x: float = 0.0  # the swept value, for charts
    extra: dict[str, object] = field(default_factory=dict)  # recorded with the point (e.g. how it was set up)
    # metrics the scenario measured around the traffic (e.g. a robustness class's), recorded with it
    measured: dict[str, float] = field(default_factory=dict)
    # a TCP point's ideal goodput for RFC 6349's Transfer Time Ratio where `theory_mbps` is something
    # else (an expected window-limited rate); None: the theory, else the link's full-segment goodput
    ideal_mbps: float | None = None
    # seconds of other traffic the record's numbers come from beside the point's runs (a robustness
    # class's frames, the real clients served after it): counted in the record's traffic_s only
    other_traffic_s: float = 0.0


def attach_text(name: str, text: str) -> None:
    allure.attach(text or "(empty)", name=name, attachment_type=allure.attachment_type.TEXT)


def measure(hil: HilContext, scenario: str, point: Point, repeat: int | None = None) -> CaseRecord:
    """Runs a point `repeat` times and records every number (JSONL, metrics) before any check."""
    repeat = repeat or hil.repeat
    start = time.time()
    runs: list[TrafficResult] = []
    tcp = TcpWatch(hil, [point.spec.direction]) if point.spec.proto == "tcp" else None
    if tcp is not None:  # the idle path's round trips, before the window: no probe in its counters
        with timed("RFC 6349: the idle path's round trips"):
            tcp.start()
    # a TCP flow through a DUT in the path: the peer's capture too, upstream of any loss on the uplink
    sides = ("pc", "peer") if tcp is not None and hil.in_path else ("pc",)
    window = hil.wire.window(sides) if hil.wire is not None else None
    with allure.step(f"{scenario} {point.case}: {repeat} x {point.spec.amount or f'{point.spec.duration_s:g} s'}"):
        for i in range(1, repeat + 1):
            with tcp.during(point.spec.duration_s) if tcp is not None else nullcontext():
                r = run_traffic(point.spec, hil.pc_side, hil.far_end, hil.far_end.generator)
            for name, text in r.raw.items():
                attach_text(f"{point.case} run {i}: {name}", text)
            runs.append(r)
    seen = window.close() if window is not None else None
    summary = summarize([r.receiver_mbps for r in runs])
    observed = [r.observed_mss for r in runs if r.observed_mss]
    theory = point.theory_mbps
    if point.spec.proto == "tcp" and observed and theory is not None:
        theory = tcp_goodput_mbps(hil.link_mbit, max(observed))  # the segments really on the wire
    rec = make_record(scenario, point.case, hil.dut.config.name, summary, theory)
    if point.spec.proto == "udp":
        rec.loss_pct = max(r.loss_pct or 0.0 for r in runs)
        rec.jitter_ms = max(r.jitter_ms or 0.0 for r in runs)
        rec.generator_limited = any(r.generator_limited for r in runs)
        rec.extra["offered_mbps"] = point.spec.rate_mbps
        if any(r.pc_receive_drops for r in runs):  # left out of the loss: the DUT delivered them
            rec.extra["pc_receive_drops"] = [r.pc_receive_drops for r in runs]
    rec.extra["sender_mbps"] = [round(r.sender_mbps, 3) for r in runs]
    rec.extra["sender"] = "dut" if any(r.sender_is_dut for r in runs) else "bench"  # whose shortfall it would be
    for key in sorted({k for r in runs for k in r.details}):  # a generator's own figures, worst run
        rec.measured[key] = max(r.details[key] for r in runs if key in r.details)
    rec.traffic_s = round(sum(r.duration_s or point.spec.duration_s for r in runs), 3)
    if point.spec.amount:
        rec.extra["bytes"] = [r.bytes for r in runs]
        rec.extra["duration_s"] = [round(r.duration_s or 0.0, 3) for r in runs]
    if point.spec.observe_mss:
        rec.extra["requested_mss"] = point.spec.pc_mss
        rec.extra["observed_mss"] = max(observed) if observed else None
    rec.extra["x"] = point.x
    rec.extra.update(point.extra)
    rec.measured.update(point.measured)
    if seen is not None:
        add_wire(hil, rec, seen, point.spec, sum(r.lost or 0 for r in runs), max(observed) if observed else None)
        add_dut_side(hil, rec, seen, point.spec, len(runs))
    if tcp is not None:
        ideal = point.ideal_mbps or rec.theory or tcp_goodput_mbps(hil.link_mbit, DEFAULT_SEGMENT)
        segment = segment_of(runs, seen, hil, point.spec.direction)
        with timed("RFC 6349: the figures"):
            figures = tcp.figures(point.spec.direction, rec.median, ideal, runs, segment, rec.measured, seen)
        add_tcp_figures(rec, figures)
        for name, text in tcp.texts.items():
            attach_text(f"{point.case}: {name}", text)
    rec.traffic_s = round(rec.traffic_s + point.other_traffic_s, 3)  # after the DUT's side: its CPU is the runs'
    with timed("record"):
        hil.recorder.record(rec, start, time.time())
    compare_with_baseline(hil, scenario, rec)
    return rec


def add_wire(
    hil: HilContext, rec: CaseRecord, seen: WireSeen, spec: TrafficSpec, lost: int, ss_mss: int | None
) -> None:
    """What the wire saw during a measurement, in its record: the capture's figures and the
    counters' changes; a TCP point observing its MSS gets both SYNs' options and the largest
    segment each way; a UDP point its loss ledger (attached, and named in a failure it explains)."""
    near, far = hil.pc_side.ip, hil.far_end.ip
    rec.extra["wire"] = seen.as_fields(near, far)
    if seen.pause is not None:  # a real NIC's: evidence of the DUT's flow control (hil.bench_faults)
        rec.extra["pause_frames"] = seen.pause
    if spec.observe_mss:
        rec.extra["wire_mss"] = mss_reading(seen, near, far, spec.direction == "dut_rx", ss_mss)
    if spec.proto == "udp":
        ledger = loss_ledger(lost, seen.deltas, spec.direction, hil.in_path)
        rec.extra["ledger"] = ledger.as_fields()
        if (why := ledger.explanation()) is not None:
            rec.extra["ledger_explains"] = why
        attach_text(f"{rec.case}: loss ledger", ledger.text())


def add_dut_side(hil: HilContext, rec: CaseRecord, seen: WireSeen, spec: TrafficSpec, runs: int) -> None:
    """The DUT's own side of the measurement (its CPU load, TCP segments resent and out of
    sequence, pool and heap low-water marks) in the record's metrics, where a threshold may name
    them; what its console does not report is said. A TCP transfer of whole writes (-n a multiple
    of -l) also gets the flow's data segments per write, from the DUT's count of the segments it
    sent (dut_tx) or received (dut_rx)."""
    if not seen.dut_after:
        why = "the DUT has no console" if hil.dut.driver is None else "its console reports no counters as numbers"
        if facts := hil.recorder.dut_facts:  # a stock console's own figures (ESP-IDF: free heap), with every record
            why += f"; it reports {', '.join(facts)} (recorded as `dut`)"
        rec.extra["dut_side"] = {"missing": list(DUT_SIDE_WHAT.values()), "why": why}
        return
    if not seen.dut_before:  # the reading before failed: the after values alone are since boot
        rec.extra["dut_side"] = {"missing": list(DUT_SIDE_WHAT.values()),
                                 "why": "the DUT's counters could not be read before the measurement"}  # fmt: skip
        return
    side = dut_side(seen.dut_before, seen.dut_after, rec.traffic_s, tcp=not hil.in_path)
    rec.measured.update(side.metrics)
    segments = side.metrics.get("dut_tcp_segs_sent" if spec.direction == "dut_tx" else "dut_tcp_segs_received")
    if spec.proto == "tcp" and spec.length and spec.amount and spec.amount.isdigit() and segments is not None:
        writes = runs * (int(spec.amount) // spec.length)
        rec.measured |= {"writes": float(writes), "segments": segments,
                         "segments_per_write": round(segments / writes, 4) if writes else 0.0}  # fmt: skip
    rec.extra["dut_side"] = side.as_fields()
    if hil.in_path:
        rec.extra["dut_side"]["tcp"] = "not counted: the DUT forwards the flows, its own TCP carries none of them"  # type: ignore[index]
    attach_text(f"{rec.case}: the DUT's side", side.text())


def add_tcp_figures(rec: CaseRecord, figures: TcpFigures) -> None:
    """A TCP record's RFC 6349 figures: in its metrics (a threshold may name ttr,
    tcp_efficiency_pct, buffer_delay_pct) and its extra.rfc6349 (sources, the baseline, the probe)."""
    rec.measured.update(figures.metrics)
    rec.extra["rfc6349"] = figures.as_fields()
    attach_text(f"{rec.case}: RFC 6349 (TTR, TCP efficiency, buffer delay)", figures.text())


def compare_with_baseline(hil: HilContext, scenario: str, rec: CaseRecord) -> None:
    """The record against the --baseline run's case (rec.baseline), once, after it is recorded; a
    case the baseline does not have, or measured for the record only, is not compared."""
    if hil.baseline is None or rec.baseline:
        return
    case = f"{scenario}/{rec.case}"
    known = hil.baseline.cases.get(case)
    if known is None or hil.thresholds.limits(scenario, rec.case).no_criterion is not None:
        return
    tolerance = hil.thresholds.tolerance(scenario)
    rec.baseline = {c.metric: c.as_fields(case, tolerance) for c in compare(rec, known, tolerance)}


def check(hil: HilContext, scenario: str, records: Sequence[CaseRecord], title: str | None = None) -> None:
    """Checks every record of a scenario against its limits (all recorded first) and fails with
    one message listing every violation; then against the --baseline run (a regression, a DUT
    failure too, raised when no threshold was missed). Whose fault a miss is, is decided by the
    rules of hil.bench_faults, and only there: a miss is the DUT's unless a rule's evidence excludes
    the DUT. Here that is GENERATOR_SHORT: the rate criteria of a UDP case whose sender is a host of
    the bench that fell short, with all it sent arrived and the DUT unable to slow it; every other
    criterion of that case is still judged. A BenchFault is raised only when the DUT missed nothing
    on its own. With a `title`, the case's title becomes it followed by every number against its
    criterion (hil.checks.case_title)."""
    problems: list[str] = []
    regressions: list[str] = []
    excused: list[str] = []  # the generator-limited cases, with why
    checked = [(rec, hil.thresholds.limits(scenario, rec.case)) for rec in records]
    for rec in records:
        compare_with_baseline(hil, scenario, rec)
    if title is not None:
        allure.dynamic.title(case_title(title, checked))
    proof = bench_proof(hil)
    for rec, limits in checked:
        rec.threshold = {f"{b}_{metric}": v for b, metric, v in limits.bounds()}
        if limits.no_criterion is not None:
            rec.extra["no_criterion"] = limits.no_criterion
            hil.recorder.set_verdict(rec, "no criterion")
            continue
        # an RFC 6349 figure this bench cannot give the case (a stock console without TCP counters,
        # no capture) is shown "not measured" with its reason (extra.rfc6349.missing), not failed
        fig = rec.extra.get("rfc6349") if isinstance(rec.extra.get("rfc6349"), dict) else {}
        withheld = fig.get("unanswered", {})  # the path answered no probe: the DUT's, a limit on it fails
        cannot = {k: why for k, why in fig.get("missing", {}).items() if k not in withheld}
        found = violations(rec.metrics(), limits, rec.theory, unmeasurable=cannot, withheld=withheld)
        if found and (why := limited_by_tester(rec, limits)) is not None:
            hil.recorder.set_verdict(rec, TESTER_LIMITED.name)
            excused.append(f"{why} ({', '.join(found)})")
            continue
        if found and (why := generator_short(rec, limits, proof)) is not None:
            hil.recorder.set_verdict(rec, GENERATOR_SHORT.name)
            excused.append(f"{why} ({', '.join(found)})")
            continue
        regressed = [str(c["why"]) for c in rec.baseline.values() if c.get("regressed")]
        hil.recorder.set_verdict(rec, "below threshold" if found else "regression" if regressed else "passed")
        explains = f" ({rec.extra['ledger_explains']})" if found and rec.extra.get("ledger_explains") else ""
        context = _dut_context(rec) if found or regressed else ""
        problems += [
            f"{scenario}/{rec.case}: {v}{explains if v.startswith(('loss', 'lost')) else ''}{context}" for v in found
        ]
        regressions += [f"{r}{context}" for r in regressed]
    also = f" (bench fault, not the DUT's: {'; '.join(excused)})" if excused else ""
    if problems:  # a DUT that missed a threshold fails as such, whatever else happened
        worse = f"; also against the baseline: {'; '.join(regressions)}" if regressions else ""
        raise AssertionError(f"{BELOW_THRESHOLD}: " + "; ".join(problems) + worse + also)
    if regressions:  # within its thresholds, but worse than the known-good run by more than the tolerance
        raise Regression("; ".join(regressions) + also)
    if excused:
        raise BenchFault(generator_shortfall(excused))


def bench_proof(hil: HilContext) -> BenchProof:
    """What the bench proves of every case (hil.bench_faults.BenchProof): a DUT on the bench PC on
    a core of its own (the CPU plan applied to its program)."""
    placed = str(getattr(hil.dut.adapter, "placed", ""))
    return BenchProof(local=bool(hil.dut.config.LOCAL), own_core=placed.startswith("CPU "))


def _dut_context(rec: CaseRecord) -> str:
    """What a DUT failure's message adds: the DUT's own sender short of its offered rate, and how
    the DUT's program shared the bench PC's CPU (evidence for a reviewer, never an excuse)."""
    parts = []
    sent, offered = rec.extra.get("sender_mbps"), rec.extra.get("offered_mbps")
    if rec.extra.get("sender") == "dut" and isinstance(sent, list) and sent and isinstance(offered, int | float):
        median = statistics.median(float(x) for x in sent)
        if median < GENERATOR_TOLERANCE * float(offered):
            parts.append(f"the DUT's own sender sent {median:.2f} of the {float(offered):.2f} Mbit/s offered")
    cpu = rec.extra.get("dut_cpu")
    if isinstance(cpu, dict) and float(cpu.get("wait_pct", 0.0)) > DUT_WAIT_SAY_PCT:
        parts.append(f"{cpu['thread']} waited for its core {cpu['wait_pct']} % of the case, ran {cpu['run_pct']} %")
    return f" [{'; '.join(parts)}]" if parts else ""


DUT_WAIT_SAY_PCT = 5.0  # a DUT's waiting for its core worth saying beside a miss (evidence, not an excuse)
TRIALS = 3  # a miss on a DUT on the bench PC: the case's verdict is the majority of this many trials


def confirm_miss(
    hil: HilContext, scenario: str, miss: AssertionError, remeasure: Callable[[], CaseRecord | Sequence[CaseRecord]]
) -> None:
    """A case that missed a threshold, or regressed against the baseline (--baseline), on a DUT
    running on the bench PC, in a run that asks for it (--confirm-misses: the self-test runs): the
    case is measured again until the majority of TRIALS trials has spoken, every trial recorded.
    Two misses fail it as the DUT's, with every trial's numbers (a regression stays a regression,
    a threshold miss is the graver); a trial that is itself a bench fault counts as a miss (it
    cannot show the DUT met its limits). Two trials that met every criterion pass the case: the
    first miss is said in the case's description and the run's notes, its record keeps the verdict
    it had, and the case's title is the passing trial's (`remeasure` titles it). Never a bench
    fault: one trial that passed is no evidence that the bench, not the DUT, set the other
    (hil.bench_faults.RETIRED). Anything else (a bench fault, a real board, a run without the
    option) is raised as it is. `remeasure` gives the case's record, or its records where one case
    records several (both directions of the latency case), each checked again."""
    local = hil.dut.config.LOCAL
    if not hil.confirm_misses or not local or isinstance(miss, BenchFault):
        raise miss
    misses: list[AssertionError] = [miss]
    missed_in: list[int] = [1]  # the trials that missed
    passes: list[str] = []
    majority = TRIALS // 2 + 1
    for trial in range(2, TRIALS + 1):
        with allure.step(f"trial {trial} of {TRIALS}: {scenario} measured again after a miss on the bench PC"):
            measured = remeasure()
            again = [measured] if isinstance(measured, CaseRecord) else list(measured)
            try:
                check(hil, scenario, again)
            except AssertionError as other:  # a miss, or a bench fault that cannot show the DUT met its limits
                misses.append(other)
                missed_in.append(trial)
            else:
                passes.append("; ".join(headline(r) for r in again))
        if len(misses) >= majority:
            trials = "; ".join(f"trial {i}: {_finding(m)}" for i, m in zip(missed_in, misses, strict=True))
            raise _same_kind(f"{len(misses)} of {trial} trials missed: {trials}", *misses) from None
        if len(passes) >= majority:
            break
    note = (
        f"{len(misses)} of {len(misses) + len(passes)} trials missed ({_finding(miss)}); "
        f"{len(passes)} met every criterion ({'; '.join(passes)})"
    )
    allure.dynamic.description(f"Passed by the majority of its trials: {note}. Every trial is recorded.")
    hil.recorder.note(f"{scenario}: {note}")


def _finding(miss: AssertionError) -> str:
    """A miss's message without its kind's prefix."""
    return (
        str(miss)
        .removeprefix(f"{BELOW_THRESHOLD}: ")
        .removeprefix(f"{REGRESSION} against the baseline: ")
        .removeprefix("BENCH FAULT: ")
    )


def _same_kind(finding: str, *misses: AssertionError) -> AssertionError:
    """`finding` as the kind of miss the trials were: a regression when each the DUT missed was
    one, else a threshold missed (the graver); a trial the bench faulted in says nothing of the kind."""
    judged = [m for m in misses if not isinstance(m, BenchFault)]
    if judged and all(isinstance(m, Regression) for m in judged):
        return Regression(finding)
    return AssertionError(f"{BELOW_THRESHOLD}: {finding}")


def table(records: Sequence[CaseRecord], xname: str) -> str:
    lines = [f"{xname:>12s} {'median':>9s} {'min':>9s} {'max':>9s} {'theory':>8s} {'eff%':>6s}  case"]
    for r in records:
        theory = f"{r.theory:8.2f}" if r.theory else f"{'-':>8s}"
        eff = f"{r.efficiency_pct:6.1f}" if r.efficiency_pct else f"{'-':>6s}"
        x = r.extra.get("x", "")
        lines.append(f"{x!s:>12s} {r.median:9.2f} {r.minimum:9.2f} {r.maximum:9.2f} {theory} {eff}  {r.case}")
    return "\n".join(lines)
