"""Stress with bursty multi-stream UDP (thesis, Network Stream Service): the patient-monitoring
and stress profiles (data files in stream-profiles/). A DUT that ends the traffic: the
firmware's `stream` command sends and counts the DUT's streams, a precisely paced stream peer on
the PC the PC's. A DUT in the path: a stream peer on the PC and one on the peer host (over SSH,
too), the uplink streams (`dut_tx`) from the peer, the downlink (`dut_rx`) from the PC. DUT to
DUT: the DUT's `stream` command sends its streams to its partner and the partner's the others
(hil.traffic.stream_runs.streams_between_consoles). Every
receiver reports loss, out-of-order and late packets per stream and every burst that arrived
incomplete, drawn as lost packets per burst over time. With loss injected on the link, the loss
the suite reports is compared with the frames the injector actually dropped."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import TYPE_CHECKING

import allure

from hil.bench_faults import excused_bursts, judged_burst_loss
from hil.directions import direction_name
from hil.errors import DutError
from hil.report.background_charts import attach_chart
from hil.results.recorder import make_record
from hil.scenarios.charts import timeline_chart
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.metrics import DIRECTION, STREAM, ScenarioShape
from hil.scenarios.sweep import attach_text, bench_proof, check
from hil.stats import summarize
from hil.traffic.streams import StreamSpec, load_profile
from hil.wire.bursts import COMPRESSED_BELOW, BurstTiming, burst_timing
from hil.wire.bursts import HEADER as TIMING_HEADER
from hil.wire.ledger import Ledger, loss_ledger

if TYPE_CHECKING:
    from hil.session import HilContext
    from hil.wire.watch import WireSeen

PROFILES = ("patient-monitoring", "stress")  # the stream profiles (stream-profiles/<name>.yaml)
INJECTED_TOLERANCE_POINTS = 0.3


@register
class StreamProfiles:
    name = "stress: bursty multi-stream UDP"
    marker = "stress"
    marker_doc = "bursty multi-stream UDP"
    shapes = (ScenarioShape(r"stress-[a-z0-9][a-z0-9-]*", rf"all|s\d+-{DIRECTION}", STREAM, "s4-dut_rx", pattern=True),)

    def cases(self, bench: BenchFacts) -> list[Case]:
        return [Case(self, name, name, needs=frozenset({"streams"})) for name in PROFILES]

    def record_keys(self, case: Case, bench: BenchFacts) -> list[tuple[str, str]]:
        profile = load_profile(str(case.point))
        streams = [f"s{s.id}-{direction_name(s.direction, bench.in_path)}" for s in profile.streams]
        return [(f"stress-{profile.name}", key) for key in [*streams, "all"]]

    def run(self, hil: HilContext, case: Case) -> None:
        stream_profile(hil, str(case.point))


def combine(spec: StreamSpec, sender: dict, receiver: dict, wire_compressed: Collection[int] = ()) -> dict:
    """One stream's numbers from its sender's and its receiver's reports, and the bursts the
    capture where its frames leave for the DUT saw compressed (`wire_compressed`; none when not
    captured): the lost packets of a burst that both name are the bench's (COMPRESSED_BURSTS).

    Both receivers (the firmware's STREAM line, the PC's stream peer) count every packet once:
    `received` is distinct packets, duplicates and packets of bursts already closed (`stale`)
    apart, so the loss is exactly sent - received; they count every lossy burst and say how many
    got no STREAMLOSS line (`losses_capped`)."""
    if "duplicates" not in receiver:
        raise DutError(
            f"stream {spec.id}: the receiver's report has no duplicates count (firmware too old?): {receiver}"
        )
    losses = {int(b): n for b, n in receiver.get("losses", {}).items()}
    sent = sender["sent"]
    # bursts the receiver never saw at the end of the test were lost entirely
    for b in range(receiver.get("last_burst", -1) + 1, sender["bursts"]):
        losses[b] = spec.burst
    lost = max(0, sent - receiver["received"])
    compressed_lossy = sorted(set(sender.get("compressed_bursts", [])) & set(losses))
    # the bench's sender fell behind and the DUT was given these bursts compressed: their own lost
    # packets only are not judged (hil.bench_faults.COMPRESSED_BURSTS); every other loss is the DUT's
    forgiven = excused_bursts(compressed_lossy, wire_compressed, losses)
    _, excused = judged_burst_loss(sent, losses, forgiven)
    judged = max(0, lost - excused)
    return {
        "host_sender": "compressed_bursts" in sender,  # a host's peer sent it: it reports its own pacing
        "behind": sender.get("behind", 0), "max_behind_us": sender.get("max_behind_us", 0),
        "compressed_lossy_bursts": compressed_lossy, "excused_bursts": forgiven,
        "sent": sent, "received": receiver["received"], "lost": lost, "excused_lost": excused,
        "loss_pct": 100.0 * judged / sent if sent else 100.0, "outoforder": receiver["outoforder"],
        "late": receiver["late"], "losses": losses, "send_errors": sender.get("send_errors", 0),
        # lossy bursts, those without a STREAMLOSS line (losses_capped) included
        "lossy_bursts": len(losses) + int(receiver.get("losses_capped", 0)),
        "duplicates": receiver["duplicates"], "stale": receiver.get("stale", 0),
        "receiver_lost": receiver.get("lost"),  # in bursts 0..last_burst
        "losses_capped": receiver.get("losses_capped", 0),
    }  # fmt: skip


def wire_compressed(timing: BurstTiming | None) -> tuple[int, ...]:
    """The bursts a stream's capture saw compressed (none: it was not captured)."""
    return timing.compressed if timing is not None else ()


def stream_timing(seen: WireSeen, spec: StreamSpec) -> BurstTiming | None:
    """A stream's bursts where its sender's frames leave for the wire, where the bench sees that:
    the PC's interface for the PC's streams (dut_rx; after its shaper), the peer's for the peer's
    behind a DUT in the path; a DUT's own streams as they reach the PC."""
    side = "peer" if spec.direction == "dut_tx" and "peer" in seen.summaries else "pc"
    summary = seen.summaries.get(side)
    flows = summary.udp_flows if summary is not None else []
    flow = next((f for f in flows if f.dport == spec.port and f.seq_format == "stream"), None)
    return burst_timing(flow, spec.id, spec.gap_us, spec.period_ms) if flow is not None else None


def stream_ledgers(seen: WireSeen, streams: list[StreamSpec], per_stream: dict, in_path: bool) -> dict[str, Ledger]:  # type: ignore[type-arg]
    """The lost packets of each direction's streams placed on the hops whose counters moved."""
    lost: dict[str, int] = {}
    for spec in streams:
        lost[spec.direction] = lost.get(spec.direction, 0) + int(per_stream[spec.id]["lost"])
    return {d: loss_ledger(n, seen.deltas, d, in_path) for d, n in sorted(lost.items())}


def timing_table(timings: list[tuple[BurstTiming, str]]) -> str:
    lines = [TIMING_HEADER, *(t.line(direction) for t, direction in timings)]
    lines.append(
        f"a burst whose median gap is below {COMPRESSED_BELOW:g} x the profile's went out compressed; timed where the "
        "sender's frames leave for the wire (the PC's streams after its shaper, the peer's on its interface), a DUT's "
        "own where they reach the PC"
    )
    return "\n".join(lines)


def stream_profile(hil: HilContext, profile_name: str) -> None:
    allure.dynamic.feature("stress: bursty multi-stream UDP")
    allure.dynamic.story(f"stress {profile_name}")
    partner = hil.pc_side.near  # DUT to DUT: the partner's console runs the PC's streams
    pair = f", {hil.dut.config.name} <-> {partner.name}" if partner is not None else ""
    title = f"stress-{profile_name}: stream profile {profile_name}{pair}"
    allure.dynamic.title(title)
    profile = load_profile(profile_name)
    duration = hil.profile.stream_duration_s or profile.duration_s
    scenario = f"stress-{profile.name}"
    start = time.time()
    # the window reads the injected loss's counter with every hop's (hil.wire.counters)
    window = hil.wire.window(sides=("pc", "peer")) if hil.wire is not None else None
    drops_before = hil.topology.loss_counter() if window is None else None
    ends, evidence = hil.far_end.streams(hil.pc_side, profile, duration)
    seen = window.close() if window is not None else None
    drops_after = hil.topology.loss_counter() if window is None else None
    injected = (
        seen.injected_drops
        if seen is not None
        else (drops_after - drops_before if drops_before is not None and drops_after is not None else None)
    )
    for name, text in evidence.items():
        attach_text(name, text)

    # each stream's bursts as the capture saw them where its sender's frames leave for the DUT
    timing_of = {s.id: stream_timing(seen, s) for s in profile.streams} if seen is not None else {}
    # a burst the wire saw compressed is the bench's only if the DUT could not have slowed its sender
    unslowed = bench_proof(hil).sender_unslowed(seen.pause) if seen is not None else None
    per_stream = {
        s.id: combine(s, *ends[s.id], wire_compressed(timing_of.get(s.id)) if unslowed else ()) for s in profile.streams
    }
    total_sent = sum(v["sent"] for v in per_stream.values())
    total_lost = sum(v["lost"] for v in per_stream.values())
    total_excused = sum(v["excused_lost"] for v in per_stream.values())
    records = []
    timings: list[tuple[BurstTiming, str]] = []
    for spec in profile.streams:
        v = per_stream[spec.id]
        case = f"s{spec.id}-{hil.direction(spec.direction)}"
        rec = make_record(scenario, case, hil.dut.config.name, summarize([v["loss_pct"]]), None, unit="% lost")
        rec.loss_pct = v["loss_pct"]
        rec.measured.update({k: float(v[k]) for k in ("sent", "received", "lost", "outoforder", "late", "send_errors")})
        rec.measured["excused_lost"] = float(v["excused_lost"])  # in bursts the bench sent compressed: not judged
        rec.measured["lossy_bursts"] = float(v["lossy_bursts"])
        rec.measured["duplicates"] = float(v["duplicates"])  # counted apart from what was received
        # packets of bursts it had closed (counted lost), its own loss total over bursts up to its
        # last, lossy bursts it printed no STREAMLOSS line for
        rec.extra.update({k: v[k] for k in ("stale", "receiver_lost", "losses_capped")})
        if v["host_sender"]:  # a host's peer sent it: how well it kept the profile's spacing
            rec.measured["generator_behind"] = float(v["behind"])
            rec.extra["generator_max_behind_us"] = v["max_behind_us"]
            # bursts the host sent late (it fell behind its schedule) that lost packets, and those of
            # them the wire saw reach the DUT compressed: only the latter's own packets are not judged
            rec.extra["compressed_lossy_bursts"] = v["compressed_lossy_bursts"][:20]
            rec.extra["excused_bursts"] = v["excused_bursts"][:20]
        if (timing := timing_of.get(spec.id)) is not None:
            rec.extra["wire_bursts"] = timing.as_fields()
            timings.append((timing, hil.direction(spec.direction)))
        hil.recorder.record(rec, start, time.time())
        records.append(rec)
    if timings:
        attach_text("burst timing on the wire (capture timestamps)", timing_table(timings))
    total_pct = 100.0 * (total_lost - total_excused) / total_sent if total_sent else 100.0
    total = make_record(scenario, "all", hil.dut.config.name, summarize([total_pct]), None, unit="% lost")
    total.loss_pct = total_pct
    total.measured.update(
        sent=float(total_sent),
        lost=float(total_lost),
        excused_lost=float(total_excused),
        late=float(sum(v["late"] for v in per_stream.values())),
        outoforder=float(sum(v["outoforder"] for v in per_stream.values())),
    )
    total.measured["duplicates"] = float(sum(v["duplicates"] for v in per_stream.values()))
    total.extra.update(duration_s=duration)
    if seen is not None:  # each direction's lost packets placed hop by hop (hil.wire.ledger)
        ledgers = stream_ledgers(seen, profile.streams, per_stream, hil.in_path)
        total.extra["ledger"] = {hil.direction(d): ledger.as_fields() for d, ledger in ledgers.items()}
        total.extra["counters"] = seen.deltas
        attach_text("loss ledger", "\n\n".join(f"{hil.direction(d)}: {ledger.text()}" for d, ledger in ledgers.items()))
    total.traffic_s = duration  # the streams ran at once: the total carries their traffic time
    injected_pct = None
    if injected is not None:
        injected_pct = 100.0 * injected / total_sent if total_sent else 0.0
        total.extra.update(injected_drops=injected, injected_pct=round(injected_pct, 4))
    hil.recorder.record(total, start, time.time())
    records.append(total)

    lines = [
        f"{'stream':>8s} {'dir':>8s} {'sent':>7s} {'recv':>7s} {'lost':>6s} {'loss %':>8s} {'ooo':>5s} {'late':>5s}"
        "  host sender behind schedule (packets, worst us)"
    ]
    for spec in profile.streams:
        v = per_stream[spec.id]
        lines.append(
            f"{spec.id:8d} {hil.direction(spec.direction):>8s} {v['sent']:7d} {v['received']:7d} {v['lost']:6d} "
            f"{v['loss_pct']:8.4f} {v['outoforder']:5d} {v['late']:5d}"
            + (f"  {v['behind']}, {v['max_behind_us']}" if v["host_sender"] else "")
        )
    lines.append(
        f"total: {total_lost} of {total_sent} lost in {duration:g} s; judged {total_pct:.4f} %"
        + (
            f" ({total_excused} lost in bursts the bench's sender sent late and the wire saw reach the DUT "
            "compressed, not judged)"
            if total_excused
            else ""
        )
    )
    if injected_pct is not None:
        lines.append(f"injected on the link: {injected} frames dropped ({injected_pct:.4f} %)")
    attach_text("streams", "\n".join(lines))
    series, totals = {}, {}  # totals: (lost, sent) per stream: a stream without loss is a line of text
    for spec in profile.streams:
        losses = per_stream[spec.id]["losses"]
        bursts = max(1, per_stream[spec.id]["sent"] // spec.burst)
        name = f"stream {spec.id} ({hil.direction(spec.direction)}, {spec.size} B x {spec.burst} / {spec.period_ms} ms)"
        series[name] = [(b * spec.period_ms / 1000.0, float(losses.get(b, 0))) for b in range(bursts)]
        totals[name] = (per_stream[spec.id]["lost"], per_stream[spec.id]["sent"])
    attach_chart("lost packets per burst", timeline_chart, f"{profile.name}: lost packets per burst", series, "lost",
                 totals)  # fmt: skip

    if injected_pct is not None:  # the suite's own count against the injector's: every lost packet
        raw_pct = 100.0 * total_lost / total_sent if total_sent else 100.0
        diff = abs(raw_pct - injected_pct)
        assert diff <= INJECTED_TOLERANCE_POINTS, (
            f"BENCH FAULT: reported loss {raw_pct:.3f} % differs from the injected {injected_pct:.3f} % "
            f"by {diff:.3f} points (> {INJECTED_TOLERANCE_POINTS})"
        )
    # loss, late and out-of-order packets: the profile's max_loss_pct, max_late, ...
    check(hil, scenario, records, title=title)
