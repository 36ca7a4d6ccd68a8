"""TCP window sweep (seed 000, 5.1.2; seed 001): the PC-side socket buffer (-w) with the DUT
as server and as client on the shaped link, and the DUT-side window through firmware build
configurations (TCP_WND = TCP_SND_BUF = k x MSS, one build directory per config).

The DUT ladder is one case per step (`window_dut/dut_rx-wnd4`), measured where the window
limits the rate by construction: the firmware's link delay line holds every frame the DUT
receives for the profile's `window_dut_delay_ms`, so a
PC->DUT stream moves one window per round trip, TCP_WND / (delay + one segment and its ACK on the
wire), far below the link rate - the same figure on any machine. Each step is checked against
that expected value (the threshold profile's efficiency limits are the tolerance). A firmware
without the delay line (an ESP32 on ESP-IDF's lwIP) gets the ladder on the bench's own link and
the profile's `trends:` entry instead. The unshaped ladder (where the host's CPU, not the window,
sets the rate) is a figure of `./suite benchmark`, not a gate."""

from __future__ import annotations

from typing import TYPE_CHECKING

import allure

from hil.checks import BELOW_THRESHOLD, criteria, trend_violations
from hil.report.background_charts import attach_chart
from hil.results.recorder import CaseRecord
from hil.scenarios.charts import limit_line, sweep_chart
from hil.scenarios.contract import BUILDS, BenchFacts, Case, no_builds_case, register
from hil.scenarios.metrics import CONFIG, IPERF3, THROUGHPUT, ScenarioShape
from hil.scenarios.rfc6349 import expected_window_figures
from hil.scenarios.sweep import Point, attach_text, check, measure, table
from hil.session import NoDelayLine
from hil.theory import tcp_goodput_mbps, window_limited_goodput_mbps
from hil.traffic.roles import TrafficSpec

if TYPE_CHECKING:
    from hil.session import HilContext


@register
class DutWindowLadder:
    name = "TCP window ladder, DUT TCP_WND builds"
    marker = "window"
    marker_doc = "TCP window sweeps (PC -w, DUT build configs)"
    shapes = (ScenarioShape("window_dut", rf"dut_rx-{CONFIG}", THROUGHPUT | IPERF3, "dut_rx-wnd4", trend=True),)

    def cases(self, bench: BenchFacts) -> list[Case]:
        """One case per step of the DUT's window ladder, as its build system declares it
        (`window_dut/dut_rx-wnd2` ...); none declared: one case saying so."""
        if not bench.window_ladder:
            return [no_builds_case(self, "window_dut", bench, "TCP_WND")]
        return [
            Case(self, f"window_dut/dut_rx-{c}", (c, k), needs=BUILDS, topology="endpoint", own_builds=True)
            for c, k in bench.window_ladder
        ]

    def run(self, hil: HilContext, case: Case) -> None:
        dut_window_step(hil, case.point)  # type: ignore[arg-type]


def dut_window_step(hil: HilContext, step: tuple[str, int]) -> None:
    scenario = "window_dut"
    config, k = step
    delay_ms = hil.profile.window_dut_delay_ms
    allure.dynamic.feature("TCP window ladder, DUT TCP_WND builds")
    allure.dynamic.story("window_dut PC->DUT")
    identity = hil.flash_config(config)
    wnd, mss = identity.get_int("tcp_wnd"), identity.get_int("tcp_mss")
    spec = TrafficSpec("tcp", "dut_rx", hil.duration_s)
    case = f"dut_rx-{config}"
    limits = hil.thresholds.limits(scenario, case)
    try:
        with hil.delayed_ingress(delay_ms) as rtt_ms:
            expected = window_limited_goodput_mbps(wnd, delay_ms, hil.link_mbit, mss)
            extra = {"tcp_wnd_segments": k, "delay_ms": delay_ms, "ping_rtt_ms": round(rtt_ms, 3)}
            rec = measure(
                hil, scenario, Point(case, spec, expected, wnd, extra, ideal_mbps=tcp_goodput_mbps(hil.link_mbit, mss))
            )
    except NoDelayLine as exc:
        attach_text("delay line", f"{exc}: the ladder runs on the bench's own link with a trend check")
        rec = measure(hil, scenario, Point(case, spec, None, wnd, {"tcp_wnd_segments": k}))
        found = _ladder_on_bench_link(hil, scenario, last=config == hil.dut.adapter.window_ladder[-1][0])
        check(hil, scenario, [rec], title=f"window_dut/{case}: TCP_WND {wnd} B ({k} x MSS) on the bench link")
        assert not found, (
            f"{BELOW_THRESHOLD}: {scenario}: PC->DUT throughput does not rise with the DUT's TCP_WND: "
            + ("; ".join(found))
        )
        return
    allure.dynamic.title(
        f"window_dut/{case}: TCP_WND {wnd} B ({k} x MSS), {delay_ms} ms one-way: {rec.median:.3f} Mbit/s = "
        f"{rec.efficiency_pct or 0:.1f} % of TCP_WND / RTT {expected:.3f}; {criteria(rec.metrics(), limits)}"
    )
    if config == hil.dut.adapter.window_ladder[-1][0]:
        _attach_ladder(hil, scenario, delay_ms)
    check(hil, scenario, [rec])


def _ladder_records(hil: HilContext, scenario: str) -> list[CaseRecord]:
    """The ladder's steps measured in this run (the latest of each), in ladder order."""
    latest = {r.case: r for r in hil.recorder.latest(scenario)}
    order = [f"dut_rx-{c}" for c, _ in hil.dut.adapter.window_ladder]
    return [latest[c] for c in order if c in latest]


def _attach_ladder(hil: HilContext, scenario: str, delay_ms: int) -> None:
    """The whole ladder as measured in this run, on its last step: expected vs measured."""
    records = _ladder_records(hil, scenario)
    limits = {r.case: hil.thresholds.limits(scenario, r.case).model_dump(exclude_none=True) for r in records}
    attach_text("DUT window ladder: expected vs measured", expected_table(records, delay_ms, limits))
    band = _band(limits)
    bounds = [(r.extra["x"], hil.thresholds.limits(scenario, r.case).bounds()) for r in records]
    attach_chart(
        "throughput vs DUT window",
        sweep_chart,
        f"TCP PC->DUT, {delay_ms} ms one-way delay: goodput vs the DUT's TCP_WND",
        "DUT TCP_WND (bytes)",
        {"PC->DUT measured": [(r.extra["x"], r.median) for r in records]},  # type: ignore[misc]
        theory=[(r.extra["x"], r.theory or 0.0) for r in records],  # type: ignore[misc]
        logx=True,
        theory_label="expected: TCP_WND / RTT",
        band_pct=band,
        threshold=limit_line(bounds, "min", "mbps"),  # type: ignore[arg-type]
        min_efficiency=None if band else limit_line(bounds, "min", "efficiency_pct"),  # type: ignore[arg-type]
    )


def _band(limits: dict[str, dict[str, float]]) -> tuple[float, float] | None:
    """The efficiency limits all steps share, for the chart's band (None when they differ)."""
    bands = {(lim.get("min_efficiency_pct"), lim.get("max_efficiency_pct")) for lim in limits.values()}
    if len(bands) != 1:
        return None
    lo, hi = bands.pop()
    return (lo, hi) if lo is not None and hi is not None else None


def expected_table(records: list[CaseRecord], delay_ms: int, limits: dict[str, dict[str, float]]) -> str:
    """The ladder's steps against what the window and the delay line's round trip make of them:
    the goodput (TCP_WND / RTT), RFC 6349's Transfer Time Ratio (the link's ideal over it) and the
    most Buffer Delay % a window can cause (all of it queued ahead of a probe: TCP_WND x 8 / rate
    over the RTT; none stays queued while the window is below the path's BDP)."""
    lines = [
        f"one-way delay {delay_ms} ms on the DUT's receive side; expected = TCP_WND / (delay + one segment "
        "and its ACK on the wire); TTR = ideal / goodput; buffer delay at most TCP_WND x 8 / rate / RTT",
        f"{'TCP_WND (B)':>12s} {'k x MSS':>8s} {'ping RTT':>9s} {'BDP (B)':>8s} {'expected':>9s} {'measured':>9s} "
        f"{'meas/exp':>9s} {'TTR exp':>8s} {'TTR':>7s} {'BD% max':>8s} {'BD%':>7s}  case",
    ]
    for r in records:
        ratio = f"{r.efficiency_pct:8.1f}%" if r.efficiency_pct is not None else f"{'-':>9s}"
        fig = r.extra.get("rfc6349")
        ideal = fig.get("ideal_mbps") if isinstance(fig, dict) else None
        rtt, m = float(r.extra["ping_rtt_ms"]), r.measured  # type: ignore[arg-type]
        exp = expected_window_figures(int(r.extra["x"]), rtt, float(ideal), r.theory) if ideal and r.theory else {}  # type: ignore[arg-type]
        lines.append(
            f"{r.extra['x']:12.0f} {r.extra['tcp_wnd_segments']:8d} {rtt:7.2f}ms {_num(m.get('bdp_bytes'), 8, 0)} "
            f"{r.theory or 0.0:9.3f} {r.median:9.3f} {ratio} {_num(exp.get('ttr'), 8, 3)} {_num(m.get('ttr'), 7, 3)} "
            f"{_num(exp.get('max_buffer_delay_pct'), 8, 1)} {_num(m.get('buffer_delay_pct'), 7, 1)}  {r.case}  "
            f"limits {limits[r.case]}"
        )
    return "\n".join(lines) + "\n"


def _num(value: float | None, width: int, decimals: int) -> str:
    return f"{value:{width}.{decimals}f}" if value is not None else f"{'-':>{width}s}"


def _ladder_on_bench_link(hil: HilContext, scenario: str, last: bool) -> list[str]:
    """Without a delay line the ladder runs on the bench's own link, and on its last step the
    steps measured must rise with the window as the profile's `trends:` entry says (a real link:
    its own round trip sets the BDP). Returns the trend's violations (none before the last step)."""
    if not last:
        return []
    records = _ladder_records(hil, scenario)
    attach_text("DUT window ladder (bench link)", table(records, "TCP_WND (B)"))
    attach_chart(
        "throughput vs DUT window",
        sweep_chart,
        "TCP PC->DUT on the bench link: goodput vs the DUT's TCP_WND",
        "DUT TCP_WND (bytes)",
        {"PC->DUT": [(r.extra["x"], r.median) for r in records]},  # type: ignore[misc]
        logx=True,
        threshold=limit_line(
            [(r.extra["x"], hil.thresholds.limits(scenario, r.case).bounds()) for r in records],  # type: ignore[misc]
            "min",
            "mbps",
        ),
    )
    return _trend(hil, scenario, records)


def _trend(hil: HilContext, scenario: str, records: list[CaseRecord]) -> list[str]:
    """The ladder's trend violations against the profile's `trends:` entry, attached to the report."""
    if len(records) < 2:
        kind = hil.dut.config.kind
        attach_text("trend", f"not checked: the {kind} adapter's ladder has one build ({records[0].case})")
        return []
    trend = hil.thresholds.trend(scenario)
    steps = " -> ".join(f"{r.extra['x']:.0f} B: {r.median:.1f}" for r in records)
    found = trend_violations([(r.case, r.median) for r in records], trend)
    attach_text("trend", f"{steps} Mbit/s\nlimits: {trend.model_dump()}\n" + ("\n".join(found) or "passed"))
    return found
