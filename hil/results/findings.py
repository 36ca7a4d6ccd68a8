"""What a run's sweeps show, computed rather than left to the reader (the seeds' conclusions): the
optimum window and MSS per direction and how far the directions differ there, the knee of the
length sweeps, the size at which loss starts to grow, TX against RX. Each finding carries the
numbers it comes from; a sweep the run did not measure gives none."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from hil.results.recorder import CaseRecord

NEAR_BEST_PCT = 98.0  # a point within 2 % of a sweep's best is as good as it (noise, not a worse setting)
KNEE_PCT = 90.0  # a length sweep's knee: its smallest length reaching 90 % of its best
SAYS = {"dut_rx": "PC->DUT", "dut_tx": "DUT->PC", "downlink": "PC->peer", "uplink": "peer->PC"}
_DIRECTION = re.compile(r"(?:^|-)(dut_rx|dut_tx|downlink|uplink)(?:-|$)")
# the sweeps whose optimum is asked for: scenario -> what it sweeps
OPTIMA = {
    "window_pc": "PC-side TCP window (-w)",
    "window_dut": "DUT TCP_WND build",
    "mss_pc": "PC-side MSS (-M)",
    "mss_dut": "DUT TCP_MSS build",
}
KNEES = {"length_tcp": "TCP write length (-l)", "length_udp": "UDP datagram length (-l)"}
LOSS_BY_SIZE = {"length_udp": "UDP datagram length", "count": "IP datagram size"}
# the configuration studies (hil.scenarios.families.stack_study): scenario -> what its ladder varies
STUDIES = {"stack": "stock -> default -> tuned lwIP options", "pools": "PBUF_POOL_SIZE", "sndbuf": "TCP_SND_BUF"}


@dataclass(frozen=True)
class Finding:
    topic: str  # the scenario it comes from
    statement: str  # what the numbers show
    numbers: str  # the points it comes from

    def text(self) -> str:
        return f"{self.topic}: {self.statement}\n    from: {self.numbers}"


def _direction(case: str) -> str | None:
    m = _DIRECTION.search(case)
    return m.group(1) if m else None


def _label(rec: CaseRecord, direction: str) -> str:
    """The point's part of the case id: dut_rx-w32K -> w32K, udp-dut_rx-ip100 -> ip100."""
    return rec.case.split(f"{direction}-", 1)[-1] if f"{direction}-" in rec.case else rec.case


def _x(rec: CaseRecord) -> float:
    x = rec.extra.get("x")
    return float(x) if isinstance(x, int | float) else 0.0


def _groups(records: Iterable[CaseRecord], scenario: str, proto: str | None = None) -> dict[str, list[CaseRecord]]:
    """A scenario's measured records per direction (and protocol prefix), in swept order."""
    out: dict[str, list[CaseRecord]] = {}
    for r in records:
        if r.scenario != scenario or (r.unit != "Mbit/s" and scenario != "count"):
            continue
        if proto is not None and not r.case.startswith(f"{proto}-"):
            continue
        if (d := _direction(r.case)) is not None:
            out.setdefault(d, []).append(r)
    return {d: sorted(rs, key=_x) for d, rs in out.items()}


def _points(rs: Sequence[CaseRecord], direction: str) -> str:
    return ", ".join(f"{_label(r, direction)} {r.median:.2f}" for r in rs) + " Mbit/s"


def optimum(records: Sequence[CaseRecord], scenario: str, what: str) -> Finding | None:
    """A sweep's optimum per direction (its best median, and the smallest setting within 2 % of it),
    and the ratio between the directions' bests."""
    groups = {d: rs for d, rs in _groups(records, scenario).items() if len(rs) >= 2}
    if not groups:
        return None
    parts, numbers, best = [], [], {}
    for d, rs in groups.items():
        top = max(rs, key=lambda r: r.median)
        near = [r for r in rs if r.median >= top.median * NEAR_BEST_PCT / 100]
        best[d] = top.median
        if len(near) == len(rs):  # a plateau: the setting does not matter here, something else limits
            parts.append(f"{SAYS.get(d, d)}: none (every point within 2 % of the best, {top.median:.2f} Mbit/s)")
        else:
            also = f"; from {_label(near[0], d)} on within 2 % of it" if near[0] is not top else ""
            parts.append(f"{SAYS.get(d, d)}: {_label(top, d)} ({top.median:.2f} Mbit/s{also})")
        numbers.append(f"{d}: {_points(rs, d)}")
    statement = f"optimum {what}: " + "; ".join(parts)
    if len(best) == 2:
        (d1, b1), (d2, b2) = sorted(best.items())
        if b1 > 0:
            statement += f"; {SAYS.get(d2, d2)} / {SAYS.get(d1, d1)} at their optima {b2 / b1:.2f}"
    return Finding(scenario, statement, "; ".join(numbers))


def knee(records: Sequence[CaseRecord], scenario: str, what: str) -> Finding | None:
    """A length sweep's knee per direction: the smallest length whose median reaches 90 % of the
    sweep's best (beyond it, longer writes or datagrams gain little)."""
    groups = {d: rs for d, rs in _groups(records, scenario).items() if len(rs) >= 2}
    if not groups:
        return None
    parts, numbers = [], []
    for d, rs in groups.items():
        top = max(rs, key=lambda r: r.median)
        first = next(r for r in rs if r.median >= top.median * KNEE_PCT / 100)
        if first is rs[0]:
            parts.append(f"{SAYS.get(d, d)}: none, flat (the shortest, {_label(first, d)}, already within "
                         f"{100 - KNEE_PCT:g} % of the best, {top.median:.2f} Mbit/s)")  # fmt: skip
            numbers.append(f"{d}: {_points(rs, d)}")
            continue
        if first is top:  # only the best point gets there: the knee lies between it and the one before
            before = rs[rs.index(top) - 1]
            parts.append(
                f"{SAYS.get(d, d)} reaches {KNEE_PCT:g} % of its best only at {_label(top, d)} ({top.median:.2f} "
                f"Mbit/s): the knee lies between {_label(before, d)} and {_label(top, d)}"
            )
            numbers.append(f"{d}: {_points(rs, d)}")
            continue
        parts.append(
            f"{SAYS.get(d, d)} reaches {KNEE_PCT:g} % of its best ({top.median:.2f} Mbit/s at {_label(top, d)}) "
            f"at {_label(first, d)} ({first.median:.2f} Mbit/s)"
        )
        numbers.append(f"{d}: {_points(rs, d)}")
    return Finding(scenario, f"knee of the {what} sweep: " + "; ".join(parts), "; ".join(numbers))


def _loss(r: CaseRecord) -> float | None:
    return r.loss_pct if r.loss_pct is not None else r.measured.get("loss_pct")


def loss_onset(records: Sequence[CaseRecord], scenario: str, what: str, proto: str | None = None) -> Finding | None:
    """Where loss starts with size per direction: the smallest size that lost anything, and
    whether loss then grows with size (the seeds: a fast sender overruns a slow receiver)."""
    groups = {d: rs for d, rs in _groups(records, scenario, proto).items() if len(rs) >= 2}
    parts, numbers = [], []
    for d, rs in groups.items():
        losses = [(r, _loss(r)) for r in rs]
        known = [(r, v) for r, v in losses if v is not None]
        if len(known) < 2:
            continue
        numbers.append(f"{d}: " + ", ".join(f"{_label(r, d)} {v:.3f} %" for r, v in known))
        lossy = [(r, v) for r, v in known if v > 0]
        if not lossy:
            parts.append(f"{SAYS.get(d, d)} lost nothing at any size")
            continue
        start, value = lossy[0]
        after = [v for _, v in known[known.index((start, value)) :]]
        grows = all(b >= a for a, b in pairwise(after))
        trend = (
            "and grows with size" if grows and len(after) > 1 and after[-1] > after[0] else "and does not grow steadily"
        )
        parts.append(f"{SAYS.get(d, d)} starts losing at {_label(start, d)} ({value:.3f} %) {trend}")
    if not parts:
        return None
    topic = f"{scenario} {proto} loss" if proto else f"{scenario} loss"
    return Finding(topic, f"loss against {what}: " + "; ".join(parts), "; ".join(numbers))


def tx_against_rx(records: Sequence[CaseRecord]) -> Finding | None:
    """The baseline's DUT->PC against its PC->DUT median, per protocol (seed 000: TX beats RX)."""
    latest = {r.case: r for r in records if r.scenario == "baseline" and r.unit == "Mbit/s"}
    parts, numbers = [], []
    for proto in ("tcp", "udp"):
        for tx, rx in (("dut_tx", "dut_rx"), ("uplink", "downlink")):
            a, b = latest.get(f"{proto}-{tx}"), latest.get(f"{proto}-{rx}")
            if a is None or b is None or b.median <= 0:
                continue
            ratio = a.median / b.median
            who = f"{SAYS[tx]} faster" if ratio > 1.01 else f"{SAYS[rx]} faster" if ratio < 0.99 else "even"
            parts.append(f"{proto.upper()} {SAYS[tx]} / {SAYS[rx]} {ratio:.3f} ({who})")
            numbers.append(f"{proto}-{tx} {a.median:.2f}, {proto}-{rx} {b.median:.2f} Mbit/s")
    if not parts:
        return None
    return Finding("baseline", "direction asymmetry: " + "; ".join(parts), "; ".join(numbers))


def study(records: Sequence[CaseRecord], scenario: str, what: str) -> Finding | None:
    """A configuration study's ladder: its builds' medians in ladder order, the last over the
    first, and the stack study's tuned / stock factor (seed 001: 4-5x)."""
    steps = sorted((r for r in records if r.scenario == scenario and r.unit == "Mbit/s"), key=_x)
    if len(steps) < 2:
        return None
    by = {str(r.extra.get("config", r.case)): r.median for r in steps}
    d = _direction(steps[0].case) or ""
    first, last = steps[0], steps[-1]
    statement = f"{what}, {SAYS.get(d, d)}: "
    if "stock" in by and "tuned" in by and by["stock"] > 0:
        statement += f"the tuned build is {by['tuned'] / by['stock']:.2f}x the stock build"
    elif first.median > 0:
        statement += f"{_label(last, d)} is {last.median / first.median:.2f}x {_label(first, d)}"
    numbers = ", ".join(f"{c} {v:.3f}" for c, v in by.items()) + " Mbit/s"
    return Finding(f"{scenario} study", statement, numbers)


def nagle(records: Sequence[CaseRecord]) -> Finding | None:
    """Nagle's algorithm on against off at small writes, per direction: segments per write (seed
    002: the ezTCP modules' transmission delay)."""
    per = {r.case: r.measured["segments_per_write"] for r in records
           if r.scenario == "nagle" and "segments_per_write" in r.measured}  # fmt: skip
    parts, numbers = [], []
    for d in ("dut_rx", "dut_tx"):
        on, off = per.get(f"{d}-on"), per.get(f"{d}-off")
        if on is None or off is None:
            continue
        ratio = f", {off / on:.1f}x the segments" if on > 0 else ""
        parts.append(f"{SAYS[d]} sends {off:.2f} segments a write with Nagle off, {on:.2f} with it on{ratio}")
        numbers.append(f"{d}-off {off:.4f}, {d}-on {on:.4f} segments per write")
    if not parts:
        return None
    return Finding("nagle", "Nagle at small writes: " + "; ".join(parts), "; ".join(numbers))


def findings(records: Sequence[CaseRecord]) -> list[Finding]:
    """Every finding the run's latest records support, in a fixed order."""
    out: list[Finding | None] = [tx_against_rx(records)]
    out += [optimum(records, s, what) for s, what in OPTIMA.items()]
    out += [knee(records, s, what) for s, what in KNEES.items()]
    out += [loss_onset(records, "length_udp", LOSS_BY_SIZE["length_udp"])]
    out += [loss_onset(records, "count", LOSS_BY_SIZE["count"], proto) for proto in ("udp", "tcp")]
    out += [study(records, s, what) for s, what in STUDIES.items()]
    out += [nagle(records)]
    return _pair_named([f for f in out if f is not None], records)


def _pair_named(found: list[Finding], records: Sequence[CaseRecord]) -> list[Finding]:
    """DUT to DUT (a bench file's partner:): the directions said as the records' flows (`host-a ->
    host-b`), not as the PC's (the PC is on neither end)."""
    flows = {d: r.extra["flow"] for r in records if isinstance(r.extra.get("flow"), str)
             for d in ("dut_tx", "dut_rx") if d in r.case}  # fmt: skip
    if not flows:
        return found
    says = {SAYS[d]: str(flow).replace(" ", "") for d, flow in flows.items()}
    pattern = re.compile("|".join(re.escape(k) for k in says))
    return [dataclasses.replace(f, statement=pattern.sub(lambda m: says[m.group(0)], f.statement)) for f in found]


def findings_text(found: Sequence[Finding]) -> str:
    if not found:
        return "no findings: the run measured none of the sweeps they come from\n"
    return "\n".join(f.text() for f in found) + "\n"
