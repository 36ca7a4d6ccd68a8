"""Latency (thesis: ping -w 10 each way, avg 0.89/0.94 ms) and flood ping (thesis table 12:
ping -f -s LEN-8 for LEN 64/100/500/1448, packets, average RTT and loss, both directions).
PC->DUT uses the OS ping; DUT->PC the firmware's console ping (-i 0 sends on each reply; -q keeps
a flood from being paced by the console, as ping -f does not print replies either)."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable

import allure
import pytest

from fixtures.options import DUT_KEY, PROFILE_KEY
from hil.checks import criteria
from hil.console.dialects.base import DialectDriver
from hil.errors import BenchError, DutError
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.sweep import attach_text, check
from hil.session import HilContext
from hil.stats import Summary, summarize
from hil.tools.ping import PingStats, parse_iputils, percentile
from hil.traffic.endpoints import HostEndpoint

pytestmark = [pytest.mark.hil, pytest.mark.latency]


def pc_ping(hil: HilContext, args: list[str], timeout_s: float) -> tuple[PingStats, str]:
    """The PC pings the far end (the DUT, or the peer host through an in-path DUT)."""
    return host_ping(hil.pc_side.netns_prefix, args, hil.far_end.ip, timeout_s)


def host_ping(netns_prefix: list[str], args: list[str], target: str, timeout_s: float) -> tuple[PingStats, str]:
    argv = [*netns_prefix, "ping", *args, target]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise BenchError(f"ping did not finish within {timeout_s:g} s: {' '.join(argv)}") from None
    text = proc.stdout + proc.stderr
    try:
        return parse_iputils(text), f"$ {' '.join(argv)}\n{text}"
    except ValueError as exc:
        raise BenchError(f"ping from {' '.join(netns_prefix) or 'the PC'} failed: {exc}") from None


def far_ping(
    hil: HilContext, host_args: list[str], on_dut: Callable[[DialectDriver], tuple[PingStats, str]], timeout_s: float
) -> tuple[PingStats, str]:  # fmt: skip
    """The far end pings the PC: the peer host's OS ping through an in-path DUT, else the DUT's
    console ping in its dialect."""
    if isinstance(hil.far_end, HostEndpoint):
        return host_ping(hil.far_end.netns_prefix, host_args, hil.pc_side.ip, timeout_s)
    return on_dut(hil.driver)


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


def record_latency(hil: HilContext, scenario: str, case: str, stats: PingStats, start: float) -> CaseRecord:
    try:
        summary = latency_summary(stats)
    except ValueError:
        raise DutError(f"{case}: no ping reply at all ({stats.sent} sent)") from None
    rec = make_record(scenario, case, hil.dut.config.name, summary, None, unit="ms")
    rec.loss_pct = stats.loss_pct
    avg = stats.avg_ms if stats.avg_ms is not None else statistics.fmean(summary.values)
    rec.extra.update(sent=stats.sent, received=stats.received)
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


def test_ping_latency_both_directions(hil: HilContext) -> None:
    allure.dynamic.feature("ping latency")
    allure.dynamic.story("latency both directions")
    far = hil.far_end.name
    title = f"latency: {hil.profile.ping_count} pings PC->{far} and {far}->PC"
    allure.dynamic.title(title)
    scenario = "latency"
    n = hil.profile.ping_count
    start = time.time()
    args = ["-n", "-c", str(n), "-i", "0.2", "-W", "1"]
    pc_stats, pc_raw = pc_ping(hil, args, timeout_s=n * 0.2 + 10)
    attach_text(f"PC->{far} ping", pc_raw)
    records = [record_latency(hil, scenario, f"pc_to_{far.lower()}", pc_stats, start)]
    missing = None if isinstance(hil.far_end, HostEndpoint) else hil.driver.ping_missing()
    if missing is not None:  # said in the report; the PC->DUT direction is checked alone
        attach_text(f"{far}->PC ping", f"not applicable: {missing}")
        allure.dynamic.title(f"{title} (DUT->PC not applicable: {missing})")
        check(hil, scenario, records, title=f"{title} (DUT->PC not applicable)")
        return
    start = time.time()
    timeout = n * 0.2 + 10
    far_stats, far_raw = far_ping(
        hil, args, lambda d: d.ping(hil.pc_side.ip, n, 0.2, timeout), timeout_s=timeout
    )  # fmt: skip
    attach_text(f"{far}->PC ping", far_raw)
    records.append(record_latency(hil, scenario, f"{far.lower()}_to_pc", far_stats, start))
    resolution = None if isinstance(hil.far_end, HostEndpoint) else hil.driver.ping_resolution_ms
    note = ""
    if resolution is not None and resolution >= 1:  # a stock firmware's ping (ESP-IDF's prints whole ms)
        records[-1].extra["resolution_ms"] = resolution
        note = f" ({far}->PC times in steps of {resolution:g} ms: the firmware's ping resolution)"
    attach_text("latency", table(records) + (f"\n{note.strip(' ()')}" if note else ""))
    check(hil, scenario, records, title=title + note)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One flood case per direction and length of the run profile: `flood/pc_to_dut-64` (an
    in-path DUT: between the PC and the peer, `flood/pc_to_peer-64`)."""
    if "flood_point" in metafunc.fixturenames:
        lengths = metafunc.config.stash[PROFILE_KEY].flood_lengths
        dut = metafunc.config.stash.get(DUT_KEY, None)
        far = "peer" if dut is not None and dut.in_path else "dut"
        points = [(d, n) for n in lengths for d in (f"pc_to_{far}", f"{far}_to_pc")]
        console_flood = pytest.mark.dut_needs("ping_flood")  # the DUT's console pings the PC
        params = [
            pytest.param((d, n), id=f"flood/{d}-{n}", marks=console_flood if d == "dut_to_pc" else ())
            for d, n in points
        ]
        metafunc.parametrize("flood_point", params)


def test_flood_ping(hil: HilContext, flood_point: tuple[str, int]) -> None:
    direction, length = flood_point
    scenario, case = "flood", f"{direction}-{length}"
    limits = hil.thresholds.limits(scenario, case)
    allure.dynamic.feature("flood ping")
    allure.dynamic.story(f"flood {direction}")
    size = length - 8  # as the thesis: ping -f -s LEN-8
    start = time.time()
    far = hil.far_end.name
    host_args = ["-f", "-s", str(size), "-w", f"{hil.profile.flood_s:g}"]
    if direction.startswith("pc_to_"):
        stats, raw = pc_ping(hil, host_args, hil.profile.flood_s + 15)
        attach_text(f"PC->{far} flood {length} B", raw)
    else:
        count = max(10, int(hil.profile.flood_s * 1000))
        timeout = hil.profile.flood_s * 10 + 30
        stats, raw = far_ping(hil, host_args, lambda d: d.flood_ping(hil.pc_side.ip, count, size, timeout), timeout)
        attach_text(f"{far}->PC flood {length} B", raw)
    rec = record_latency(hil, scenario, case, stats, start)
    rec.extra["x"] = length
    attach_text("flood ping", table([rec]))
    allure.dynamic.title(
        f"flood/{case}: average {rec.measured['avg_ms']:.3f} ms, {rec.loss_pct or 0:.3f} % lost of "
        f"{rec.extra['sent']}; {criteria(rec.metrics(), limits)}"
    )
    check(hil, scenario, [rec])
