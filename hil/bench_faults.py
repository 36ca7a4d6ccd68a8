"""Every excuse the suite can make: the rules that call a miss the bench's fault (exit 75) instead
of the DUT's (exit 1), each with the evidence it needs, what it excuses and the defect planted in
the firmware that it must not excuse (tests/suite/test_planted_defects.py plants each and asserts
the DUT's failure). A miss no rule excuses is the DUT's. The rules the suite no longer has are
listed too, with why: a reader sees every excuse the suite can make, and every one it stopped
making (docs/verdicts.md is made from this module, and a self-test keeps the two together).

A bench fault is proven, never assumed: a rule applies only when its evidence excludes the DUT.
"It waited for a core", "a second trial passed" or "the bench may reorder" prove nothing about a
DUT that got slower, so none of them excuses anything any more: the virtual bench gives the DUT a
core of its own and steers each link's frames through one CPU (hil.plumbing.cpu_plan), which
removes those causes by construction."""

from __future__ import annotations

import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hil.config.thresholds import Limits
    from hil.results.recorder import CaseRecord


@dataclass(frozen=True)
class Rule:
    """An excuse the suite can make."""

    name: str  # the verdict it gives (results.jsonl, the run summary, the report)
    excuses: str  # what of a case it excuses
    evidence: str  # what must be shown, all of it, for the excuse to hold
    real_bench: str  # what a real bench needs to apply it
    must_not_excuse: tuple[str, ...]  # planted defects (hil.dut.planted_defects.DEFECTS) shown failed as the DUT's


@dataclass(frozen=True)
class Retired:
    """An excuse the suite made and no longer makes."""

    name: str
    was: str
    why: str
    must_not_excuse: tuple[str, ...]


GENERATOR_SHORT = Rule(
    "generator-limited",
    "the rate criteria (a minimum median, a minimum efficiency) of a UDP case whose sender is a host of the "
    "bench: never a loss, jitter, latency or count criterion",
    "the sender is a host of the bench (the PC's or the peer's iperf, the bench's frame tester), never the DUT "
    "(the DUT's own client in every family, its streams, the capacity search's DUT->PC direction); it sent less "
    "than the rate criteria need (below 97 % of the offered rate, or below what the limits ask to arrive); what "
    "arrived is at least 99 % of what it sent (the DUT delivered what it was given); and the DUT could not have "
    "slowed the sender: on the virtual bench the DUT runs on a core of its own (the CPU plan applied) and a veth "
    "has no flow control",
    "the PC NIC's pause-frame counters (ethtool -I -a) read before and after the case, none received: without "
    "them the shortfall cannot be told from a DUT asserting flow control, and it is the DUT's",
    ("udp_rate_pct", "tx_work_us"),
)
COMPRESSED_BURSTS = Rule(
    "compressed-bursts",
    "the lost packets of the stress profile's bursts that reached the DUT compressed because the bench's stream "
    "sender fell behind its schedule and sent the rest of a burst back to back: those packets only; the stream's "
    "other losses are judged against its limits",
    "all three, per burst: the burst's sender is the bench's stream peer (the PC's, or the peer's behind a DUT in "
    "the path) and reports it sent the burst late; the capture where its frames leave for the DUT (after the "
    "bench's shaper) saw the burst's packets closer together than half the profile's gap, so the DUT was given "
    "a denser train than the profile asks (a shaper that spaced them out again gave the DUT the profile's "
    "train: nothing excused); and the DUT could not have slowed the sender (its own core and a veth on the "
    "virtual bench). A burst the capture did not see, a run without captures, and the DUT's own streams are "
    "never excused",
    "a capture on the PC's bench NIC and its pause-frame counters (ethtool -I -a) read before and after the "
    "case, none received",
    ("rx_drop_ppm",),
)
TOOL_FAILED = Rule(
    "tool-failed",
    "a case a tool of the bench could not finish (an iperf or ping that timed out, printed no result or "
    "unreadable numbers, a capture that could not be read)",
    "after the failure the DUT still answers the PC's ping and its console (a DUT in the path still forwards), "
    "and its program is alive: a DUT that stopped answering is the DUT's failure, whatever the tool said (a PC "
    "client 5 s past its test's end whose far end answers none of three pings is stopped then, not at its "
    "timeout, and that silence is the DUT's failure even if it answers again: hil/traffic/overdue.py)",
    "the same",
    ("leak_per_test",),
)
NOT_OBSERVABLE = Rule(
    "not-observable",
    "a case whose required observation the bench could not make although the DUT met every limit: the PC "
    "kernel's view of a connection's MSS, an exact count against a capture that disagrees with it",
    "every limit of the case met; the missing observation is the bench's own instrument (the PC's `ss`, "
    "its capture); a count the DUT made itself that disagrees with the capture is the DUT's failure",
    "the same",
    (),
)
TESTER_LIMITED = Rule(
    "tester-limited",
    "an RFC 2544 throughput trial the bench's frame tester could not offer: the load above its own ceiling",
    "the tester's ceiling measured without the DUT (the virtual bench's tester loop, a real bench's "
    "`./suite calibrate-tester` file) and the trial's load above it",
    "the calibration file of `./suite calibrate-tester`",
    (),
)

RULES: tuple[Rule, ...] = (GENERATOR_SHORT, COMPRESSED_BURSTS, TOOL_FAILED, NOT_OBSERVABLE, TESTER_LIMITED)

RETIRED: tuple[Retired, ...] = (
    Retired(
        "host-starved",
        "a case missed by a DUT on the bench PC whose thread waited for a host core more than 10 % of the case",
        "a DUT that needs more CPU per frame always waits more on a shared host, so waiting proves nothing; the "
        "virtual bench now gives the DUT a core of its own at a priority a normal load cannot take "
        "(hil.plumbing.cpu_plan); the DUT's waiting is still recorded (`dut_cpu`) and shown with a miss",
        ("tx_work_us", "rx_work_us"),
    ),
    Retired(
        "bench-reordered",
        "a TCP case missed on a DUT on the bench PC that counted the PC's retransmissions as duplicates and some "
        "segments out of sequence",
        "a DUT whose own driver reorders what it receives shows the same figures; the virtual bench now steers "
        "each link's receive work to one CPU (RPS), so its links keep the order frames were sent in",
        ("rx_reorder_ppm",),
    ),
    Retired(
        "not-reproduced",
        "a miss on a DUT on the bench PC that a second trial did not reproduce (--confirm-misses)",
        "a bench fault needs evidence that excludes the DUT, and one passing trial is none; a miss is now "
        "measured again and the case's verdict is the majority of three trials, every trial recorded",
        ("stall_ms",),
    ),
    Retired(
        "generator-limited for the DUT's own sender",
        "a UDP case or a capacity search whose sender fell short of its offered rate, whoever sent",
        "the DUT's own sender falling short is the measurement (seed 000's UDP TX, the thesis's uplink): it is the "
        "DUT's failure; only a sender of the bench can be short (generator-limited)",
        ("udp_rate_pct", "tx_work_us"),
    ),
)

SENDER_RATE_ARRIVED = 0.99  # what must arrive of a bench sender's rate for its shortfall to be the sender's
GENERATOR_TOLERANCE = 0.97  # a bench sender below this share of its offered rate fell short
RATE_CRITERIA = frozenset({("min", "mbps"), ("min", "efficiency_pct")})


@dataclass(frozen=True)
class BenchProof:
    """What the bench can prove of every case, whatever was measured: that the DUT cannot slow a
    sender of the bench (its own core on the virtual bench, no flow control on a veth); a real
    bench proves it per case with its NIC's pause counters (`pause_counted`)."""

    local: bool  # the DUT runs on the bench PC
    own_core: bool  # ... on a core of its own (hil.plumbing.cpu_plan applied)

    def dut_cannot_slow_sender(self, rec: CaseRecord) -> str | None:
        """Why the DUT could not have slowed a sender of the bench in this case, or None when the
        bench cannot show it."""
        return self.sender_unslowed(rec.extra.get("pause_frames"))

    def sender_unslowed(self, pause: object) -> str | None:
        """Why the DUT could not have slowed a sender of the bench during a window whose pause
        frames (hil.wire.watch.pause_received; None: not read) are `pause`, or None."""
        if self.local:
            return "the DUT runs on a core of its own and a veth has no flow control" if self.own_core else None
        if isinstance(pause, Mapping) and pause.get("rx") == 0:
            return f"the PC's NIC received no pause frame during the case ({pause.get('interface')})"
        return None


def _rate_need(rec: CaseRecord, limits: Limits) -> float:
    """The Mbit/s the case's rate criteria ask to arrive."""
    need = 0.0
    for bound, metric, limit in limits.bounds():
        if bound == "min" and metric == "mbps":
            need = max(need, limit)
        elif bound == "min" and metric == "efficiency_pct" and rec.theory:
            need = max(need, limit / 100 * rec.theory)
    return need


def missed(rec: CaseRecord, limits: Limits) -> set[tuple[str, str]]:
    """(bound, metric) of every limit the record misses (a metric it lacks counts as missed)."""
    metrics = rec.metrics()
    return {
        (bound, metric)
        for bound, metric, limit in limits.bounds()
        if (value := metrics.get(metric)) is None or (value < limit if bound == "min" else value > limit)
    }


def generator_short(rec: CaseRecord, limits: Limits, proof: BenchProof) -> str | None:
    """GENERATOR_SHORT: why the case's rate criteria are the bench sender's, or None (they are the
    DUT's). Only when the rate criteria are all it missed."""
    misses = missed(rec, limits)
    if not misses or not misses <= RATE_CRITERIA:
        return None
    if rec.extra.get("sender") != "bench":
        return None  # the DUT's own sender, or a sender nobody identified: the DUT's
    if not isinstance(rec.extra.get("offered_mbps"), int | float) and not rec.generator_limited:
        return None  # no rate was offered (TCP): the sender's pace is the path's answer, the DUT's
    why = proof.dut_cannot_slow_sender(rec)
    if why is None:
        return None
    sent = rec.extra.get("sender_mbps")
    need = _rate_need(rec, limits)
    if isinstance(sent, Sequence) and sent:
        sender = statistics.median(float(x) for x in sent)  # type: ignore[arg-type]
        offered = rec.extra.get("offered_mbps")
        short_of_offer = isinstance(offered, int | float) and sender < GENERATOR_TOLERANCE * float(offered)
        if not (short_of_offer or sender < need) or rec.median < SENDER_RATE_ARRIVED * sender:
            return None
        return (
            f"{rec.case}: the bench's sender sent {sender:.2f} Mbit/s"
            + (f" of the {float(offered):.2f} offered" if isinstance(offered, int | float) else "")
            + f", less than the {need:.2f} Mbit/s the limits ask to arrive; {100 * rec.median / sender:.1f} % of it "
            f"arrived; {why}"
        )
    if rec.generator_limited:  # a search (capacity, RFC 2544) whose bench generator could not reach a load
        return f"{rec.case}: the bench's generator could not offer the loads the search asked for; {why}"
    return None


TESTER_MARGIN = 0.03  # a DUT that forwarded within this of the tester's own ceiling: the number is the tester's


def limited_by_tester(rec: CaseRecord, limits: Limits) -> str | None:
    """TESTER_LIMITED: why an RFC 2544 throughput's rate criteria are the frame tester's, or None
    (they are the DUT's). The tester's own ceiling must have been measured without the DUT (the
    virtual bench's tester loop, a real bench's calibration file), and the DUT must have forwarded
    within TESTER_MARGIN of it: a DUT that forwarded less than the tester could offer set its own number."""
    misses = missed(rec, limits)
    if not misses or not misses <= RATE_CRITERIA or rec.extra.get("tester_limited") is not True:
        return None
    ceiling, source = rec.measured.get("tester_fps"), rec.extra.get("tester_ceiling_from")
    forwarded = rec.measured.get("ndr_fps")
    if not ceiling or not isinstance(source, str) or forwarded is None:
        return None
    if forwarded < (1 - TESTER_MARGIN) * ceiling:
        return None
    return (
        f"{rec.case}: the frame tester's own ceiling is {ceiling:,.0f} frames/s ({source}), and the DUT forwarded "
        f"{forwarded:,.0f} frames/s of it without loss: the tester could not offer more"
    )


def excused_bursts(sender_late: Collection[int], wire_compressed: Collection[int], lossy: Collection[int]) -> list[int]:
    """COMPRESSED_BURSTS: the lossy bursts of a bench sender's stream whose loss is the bench's:
    those the sender reports it sent late and the capture where its frames leave for the DUT saw
    compressed (the DUT was given a denser train than the profile). A burst only one of the two
    names is judged: a sender that fell behind before a shaper that spaced its burst out again gave
    the DUT the profile's train, and a burst the capture saw close together that the sender sent
    on time is the profile's own pace on a fast link."""
    return sorted(set(sender_late) & set(wire_compressed) & set(lossy))


def judged_burst_loss(sent: int, lost_by_burst: Mapping[int, int], excused: Collection[int]) -> tuple[int, int]:
    """COMPRESSED_BURSTS: (lost packets judged as the DUT's, lost packets excused) of a stream, the
    excused being the losses of its bursts `excused_bursts` named."""
    forgiven = sum(n for b, n in lost_by_burst.items() if b in set(excused))
    return max(0, sum(lost_by_burst.values()) - forgiven), forgiven


def rule(name: str) -> Rule:
    """The rule of a verdict's name."""
    return next(r for r in RULES if r.name == name)


def table() -> str:
    """Every rule and every retired excuse, as text (the report's page of a bench fault)."""
    lines = ["Excuses the suite can make (a miss none of them excuses is the DUT's):", ""]
    for r in RULES:
        lines += [f"{r.name}: excuses {r.excuses}.", f"  evidence: {r.evidence}.", f"  real bench: {r.real_bench}."]
        if r.must_not_excuse:
            lines.append(f"  must not excuse (planted and failed as the DUT's): {', '.join(r.must_not_excuse)}")
        lines.append("")
    lines.append("Excuses the suite no longer makes:")
    for t in RETIRED:
        lines += [f"{t.name}: was {t.was}.", f"  retired: {t.why}.", f"  planted: {', '.join(t.must_not_excuse)}", ""]
    return "\n".join(lines)


DOC_HEAD = """# Verdicts: whose fault a miss is

- [The rules](#the-rules)
- [Excuses the suite no longer makes](#excuses-the-suite-no-longer-makes)

A case that misses a limit is the DUT's failure (exit 1) unless a rule below excuses it as the
bench's (exit 75, "bench fault": CI retries it once). Every rule needs evidence that excludes the
DUT; "it waited for a core", "a second trial passed" or "the bench may reorder" are not evidence,
so the suite no longer makes those excuses (the retired rules at the end). Each rule names the
defects planted in the firmware (`--plant-defect`, the firmware's `fault` command) that it must
not excuse: `tests/suite/test_planted_defects.py` plants each, once with the bench PC idle and once
with a core kept busy, and asserts the DUT's failure naming the case.

The rules live in one place, `hil/bench_faults.py`; this page is made from it
(`python -m hil.bench_faults > docs/verdicts.md`, checked by `tests/selftest/test_bench_faults.py`).
How the virtual bench removes the causes of the retired excuses (the DUT on a core of its own,
each link's receive work on one CPU): `hil/plumbing/cpu_plan.py` and
[virtual-bench.md](virtual-bench.md). A miss on a DUT that runs on the bench PC is measured again
in the test command (`--confirm-misses`): the majority of three trials decides, every trial
recorded ([testing.md](testing.md)).
"""


def markdown() -> str:
    """docs/verdicts.md: every rule and every retired excuse."""
    out = [DOC_HEAD, "## The rules", ""]
    out += [
        "| rule (verdict) | excuses | evidence it needs | on a real bench | must not excuse |",
        "|---|---|---|---|---|",
    ]
    for r in RULES:
        planted = ", ".join(f"`{d}`" for d in r.must_not_excuse) or "-"
        out.append(f"| `{r.name}` | {r.excuses} | {r.evidence} | {r.real_bench} | {planted} |")
    out += ["", "## Excuses the suite no longer makes", ""]
    out += ["| excuse | was | why it was retired | planted defect it excused |", "|---|---|---|---|"]
    for t in RETIRED:
        out.append(f"| {t.name} | {t.was} | {t.why} | {', '.join(f'`{d}`' for d in t.must_not_excuse)} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
