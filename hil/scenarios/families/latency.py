"""Latency (thesis: ping -w 10 each way, avg 0.89/0.94 ms) and flood ping (thesis table 12:
ping -f -s LEN-8 for LEN 64/100/500/1448, packets, average RTT and loss, both directions).
PC->DUT uses the OS ping; DUT->PC the firmware's console ping (-i 0 sends on each reply; -q keeps
a flood from being paced by the console, as ping -f does not print replies either)."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import allure

from hil.checks import case_title, criteria
from hil.errors import DutError
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.metrics import HOSTS, PING, ScenarioShape
from hil.scenarios.sweep import attach_text, check, confirm_miss
from hil.stats import Summary, summarize
from hil.tools.ping import PingStats, percentile, ping_argv, run_ping
from hil.traffic.far_end import ConsoleFarEnd

if TYPE_CHECKING:
    from hil.session import HilContext

PING_INTERVAL_S = 0.2


def pc_ping(hil: HilContext, timeout_s: float, **how: object) -> tuple[PingStats, str]:
    """The PC pings the far end (the DUT, or the peer host through an in-path DUT)."""
    return run_ping(ping_argv(hil.pc_side.netns_prefix, hil.far_end.ip, **how), timeout_s)  # type: ignore[arg-type]


def latency_summary(stats: PingStats) -> Summary:
    """Every round-trip time when the replies were printed; for a flood (ping -f, console ping -q)
    the summary line's average, with its min, max and mdev as the spread."""
    if stats.rtts_ms:
        return summarize(stats.rtts_ms)
    if stats.avg_ms is None:
        raise ValueError("no round-trip time")
    avg = stats.avg_ms
    return Summary((avg,), avg, stats.min_ms if stats.min_ms is not None else avg,
                   stats.max_ms if stats.max_ms is not None else avg, stats.mdev_ms or 0.0)  # fmt: skip


def record_latency(
    hil: HilContext, scenario: str, case: str, stats: PingStats, start: float, flow: str | None = None
) -> CaseRecord:
    """The pings' record (`flow`: which way the requests went between two DUTs, DUT to DUT)."""
    try:
        summary = latency_summary(stats)
    except ValueError:
        raise DutError(f"{case}: no ping reply at all ({stats.sent} sent)") from None
    rec = make_record(scenario, case, hil.dut.config.name, summary, None, unit="ms")
    rec.loss_pct = stats.loss_pct
    avg = stats.avg_ms if stats.avg_ms is not None else statistics.fmean(summary.values)
    rec.extra.update(sent=stats.sent, received=stats.received, **({"flow": flow} if flow else {}))
    rec.measured["avg_ms"] = round(avg, 4)
    if stats.rtts_ms:
        rec.measured["p99_ms"] = percentile(stats.rtts_ms, 99)
    rec.traffic_s = round(time.time() - start, 3)  # the pings are the measurement, all of their time
    hil.recorder.record(rec, start, time.time())
    return rec


def table(records: list[CaseRecord]) -> str:
    lines = [f"{'case':24s} {'sent':>7s} {'recv':>7s} {'loss %':>8s} {'min':>7s} {'avg':>7s} {'p99':>7s} {'max':>7s}"]
    for r in records:
        p99 = r.measured.get("p99_ms")
        lines.append(
            f"{r.case:24s} {r.extra['sent']:7d} {r.extra['received']:7d} {r.loss_pct or 0:8.4f} {r.minimum:7.3f} "
            f"{r.measured['avg_ms']:7.3f} {(f'{p99:7.3f}' if p99 is not None else '      -')} {r.maximum:7.3f}"
        )
    return "\n".join(lines)


@register
class Latency:
    name = "ping latency"
    marker = "latency"
    marker_doc = "ping latency and flood"
    shapes = (ScenarioShape("latency", HOSTS, PING, "pc_to_dut"),)

    def cases(self, bench: BenchFacts) -> list[Case]:
        return [Case(self, "latency")]

    def record_keys(self, case: Case, bench: BenchFacts) -> list[tuple[str, str]]:
        if bench.partner is not None:  # DUT to DUT: each DUT's console pings the other
            return [("latency", "partner_to_dut"), ("latency", "dut_to_partner")]
        far = "peer" if bench.in_path else "dut"
        return [("latency", f"pc_to_{far}"), ("latency", f"{far}_to_pc")]

    def run(self, hil: HilContext, case: Case) -> None:
        ping_both_directions(hil)


def ping_both_directions(hil: HilContext) -> None:
    """Both directions' pings, checked together; a miss on a DUT that runs on the bench PC is
    measured again, the majority of three trials the verdict (--confirm-misses)."""
    allure.dynamic.feature("ping latency")
    allure.dynamic.story("latency both directions")
    try:
        measure_both_directions(hil)
    except AssertionError as miss:
        confirm_miss(hil, "latency", miss, lambda: measure_both_directions(hil, check_them=False))


def measure_both_directions(hil: HilContext, check_them: bool = True) -> list[CaseRecord]:
    """Pings each way (the far end's only where it has a ping), records them and, with
    `check_them`, checks them; the case's title carries every number against its criterion either
    way (a trial measured again after a miss: the one the majority of trials passed on)."""
    if isinstance(hil.pc_side.near, ConsoleFarEnd):  # DUT to DUT: the partner's console where the PC's ping was
        return _measure_between_duts(hil, hil.pc_side.near, check_them)
    far = hil.far_end.name
    title = f"latency: {hil.profile.ping_count} pings PC->{far} and {far}->PC"
    allure.dynamic.title(title)
    scenario = "latency"
    n = hil.profile.ping_count
    start = time.time()
    timeout = n * PING_INTERVAL_S + 10
    pc_stats, pc_raw = pc_ping(hil, timeout, count=n, interval_s=PING_INTERVAL_S)
    attach_text(f"PC->{far} ping", pc_raw)
    records = [record_latency(hil, scenario, f"pc_to_{far.lower()}", pc_stats, start)]
    missing = hil.far_end.lacks("ping")
    if missing is not None:  # said in the report; the PC->DUT direction is checked alone
        attach_text(f"{far}->PC ping", f"not applicable: {missing}")
        allure.dynamic.title(f"{title} (DUT->PC not applicable: {missing})")
        _check_or_title(hil, scenario, records, f"{title} (DUT->PC not applicable)", check_them)
        return records
    start = time.time()
    far_stats, far_raw = hil.far_end.ping(hil.pc_side.ip, n, PING_INTERVAL_S, timeout)
    attach_text(f"{far}->PC ping", far_raw)
    records.append(record_latency(hil, scenario, f"{far.lower()}_to_pc", far_stats, start))
    resolution = hil.far_end.ping_resolution_ms
    note = ""
    if resolution is not None and resolution >= 1:  # a stock firmware's ping (ESP-IDF's prints whole ms)
        records[-1].extra["resolution_ms"] = resolution
        note = f" ({far}->PC times in steps of {resolution:g} ms: the firmware's ping resolution)"
    attach_text("latency", table(records) + (f"\n{note.strip(' ()')}" if note else ""))
    _check_or_title(hil, scenario, records, title + note, check_them)
    return records


def _measure_between_duts(hil: HilContext, partner: ConsoleFarEnd, check_them: bool) -> list[CaseRecord]:
    """DUT to DUT: the partner's console pings the DUT, the DUT's console pings the partner; each
    record names the way its requests went (`flow`)."""
    dut, other = hil.dut.config.name, partner.name
    n = hil.profile.ping_count
    title = f"latency: {n} pings {other}->{dut} and {dut}->{other}"
    allure.dynamic.title(title)
    timeout = n * PING_INTERVAL_S + 10
    records = []
    for case, sender, target, flow in (
        ("partner_to_dut", partner, hil.far_end.ip, f"{other} -> {dut}"),
        ("dut_to_partner", hil.far_end, partner.ip, f"{dut} -> {other}"),
    ):
        start = time.time()
        stats, raw = sender.ping(target, n, PING_INTERVAL_S, timeout)
        attach_text(f"{flow} ping", raw)
        records.append(record_latency(hil, "latency", case, stats, start, flow=flow))
    attach_text("latency", table(records))
    _check_or_title(hil, "latency", records, title, check_them)
    return records


def _check_or_title(hil: HilContext, scenario: str, records: list[CaseRecord], title: str, check_them: bool) -> None:
    if check_them:
        check(hil, scenario, records, title=title)
    else:  # (a report's case passed by the majority of its trials showed no number: the title without them)
        allure.dynamic.title(case_title(title, [(r, hil.thresholds.limits(scenario, r.case)) for r in records]))


@dataclass(frozen=True)
class FloodPoint:
    # pc_to_dut, dut_to_pc (pc_to_peer, peer_to_pc through a DUT in the path; DUT to DUT:
    # partner_to_dut, dut_to_partner, each DUT's console flooding the other)
    direction: str
    length: int  # the IP packet's length (ping -s LEN-8)


# the directions a DUT's console floods (a peer host floods with its own ping)
CONSOLE_FLOODS = frozenset({"dut_to_pc", "partner_to_dut", "dut_to_partner"})


@register
class Flood:
    name = "flood ping"
    marker = "latency"
    marker_doc = "ping latency and flood"
    shapes = (ScenarioShape("flood", rf"{HOSTS}-\d+", PING, "pc_to_dut-64"),)

    def cases(self, bench: BenchFacts) -> list[Case]:
        """One flood case per direction and length of the run profile: `flood/pc_to_dut-64` (an
        in-path DUT: between the PC and the peer, `flood/pc_to_peer-64`); the DUT's console
        floods the PC with its own ping (`ping_flood`)."""
        far = "peer" if bench.in_path else "dut"
        ways = ("partner_to_dut", "dut_to_partner") if bench.partner is not None else (f"pc_to_{far}", f"{far}_to_pc")
        points = [FloodPoint(d, n) for n in bench.profile.flood_lengths for d in ways]
        return [
            Case(self, f"flood/{p.direction}-{p.length}", p,
                 needs=frozenset({"ping_flood"}) if p.direction in CONSOLE_FLOODS else frozenset())
            for p in points
        ]  # fmt: skip

    def run(self, hil: HilContext, case: Case) -> None:
        flood_ping(hil, case.point)  # type: ignore[arg-type]


def flood_ping(hil: HilContext, point: FloodPoint) -> None:
    direction, length = point.direction, point.length
    scenario, case = "flood", f"{direction}-{length}"
    limits = hil.thresholds.limits(scenario, case)
    allure.dynamic.feature("flood ping")
    allure.dynamic.story(f"flood {direction}")
    size = length - 8  # as the thesis: ping -f -s LEN-8
    start = time.time()
    far = hil.far_end.name
    seconds = hil.profile.flood_s
    flow = None
    if isinstance(hil.pc_side.near, ConsoleFarEnd):  # DUT to DUT: each DUT's console floods the other
        partner, dut = hil.pc_side.near, hil.dut.config.name
        sender, target, flow = ((partner, hil.far_end.ip, f"{partner.name} -> {dut}") if direction == "partner_to_dut"
                                else (hil.far_end, partner.ip, f"{dut} -> {partner.name}"))  # fmt: skip
        stats, raw = sender.flood_ping(target, seconds, size, timeout_s=seconds * 10 + 30)
        attach_text(f"{flow} flood {length} B", raw)
    elif direction.startswith("pc_to_"):
        stats, raw = pc_ping(hil, seconds + 15, flood=True, size=size, deadline_s=seconds)
        attach_text(f"PC->{far} flood {length} B", raw)
    else:
        stats, raw = hil.far_end.flood_ping(hil.pc_side.ip, seconds, size, timeout_s=seconds * 10 + 30)
        attach_text(f"{far}->PC flood {length} B", raw)
    rec = record_latency(hil, scenario, case, stats, start, flow=flow)
    rec.extra["x"] = length
    attach_text("flood ping", table([rec]))
    allure.dynamic.title(
        f"flood/{case}: average {rec.measured['avg_ms']:.3f} ms, {rec.loss_pct or 0:.3f} % lost of "
        f"{rec.extra['sent']}; {criteria(rec.metrics(), limits)}"
    )
    check(hil, scenario, [rec])
