"""TCP window sweep (seed 000, 5.1.2; seed 001): the PC-side socket buffer (-w) with the DUT
as server and as client on the shaped link, and the DUT-side window through firmware build
configurations (TCP_WND = TCP_SND_BUF = k x MSS, one build directory per config).

The DUT ladder is measured where the window limits the rate by construction: the firmware's link
delay line holds every frame the DUT receives for the profile's `window_dut_delay_ms`, so a
PC->DUT stream moves one window per round trip, TCP_WND / (delay + one segment and its ACK on the
wire), far below the link rate - the same figure on any machine. Each step is checked against
that expected value (the threshold profile's efficiency limits are the tolerance). A firmware
without the delay line (an ESP32 on ESP-IDF's lwIP) gets the ladder on the bench's own link and
the profile's `trends:` entry instead. The unshaped ladder (where the host's CPU, not the window,
sets the rate) is a figure of `./suite bench`, not a gate."""

from __future__ import annotations

import allure
import pytest

from hil.checks import BELOW_THRESHOLD, trend_violations
from hil.results.recorder import CaseRecord
from hil.scenarios.charts import sweep_chart
from hil.scenarios.sweep import Point, attach_png, attach_text, check, measure, table
from hil.session import HilContext, NoDelayLine
from hil.theory import window_limited_goodput_mbps
from hil.traffic.roles import TrafficSpec

pytestmark = [pytest.mark.hil, pytest.mark.window]


@pytest.mark.own_builds
def test_dut_window_ladder(hil: HilContext) -> None:
    scenario = "window_dut"
    delay_ms = hil.profile.window_dut_delay_ms
    allure.dynamic.title(f"TCP window ladder, DUT TCP_WND builds, PC->DUT, {delay_ms} ms one-way delay")
    records = []
    try:
        for config, k in hil.dut.adapter.window_ladder:
            identity = hil.flash_config(config)
            wnd, mss = int(identity.fields["tcp_wnd"]), int(identity.fields["tcp_mss"])
            expected = window_limited_goodput_mbps(wnd, delay_ms, hil.link_mbit, mss)
            with hil.delayed_ingress(delay_ms) as rtt_ms:
                spec = TrafficSpec("tcp", "dut_rx", hil.duration_s)
                extra = {"tcp_wnd_segments": k, "delay_ms": delay_ms, "ping_rtt_ms": round(rtt_ms, 3)}
                records.append(measure(hil, scenario, Point(f"dut_rx-{config}", spec, expected, wnd, extra)))
    except NoDelayLine as exc:
        attach_text("delay line", f"{exc}: the ladder runs on the bench's own link with a trend check")
        _ladder_on_bench_link(hil, scenario)
        return
    limits = {r.case: hil.thresholds.limits(scenario, r.case).model_dump(exclude_none=True) for r in records}
    attach_text("DUT window ladder: expected vs measured", expected_table(records, delay_ms, limits))
    effs = [r.efficiency_pct or 0.0 for r in records]
    allure.dynamic.title(
        f"TCP window ladder, DUT TCP_WND builds, PC->DUT, {delay_ms} ms one-way delay: {len(records)} steps at "
        f"{min(effs):.1f}-{max(effs):.1f} % of TCP_WND / RTT"
    )
    attach_png(
        "throughput vs DUT window",
        sweep_chart(
            f"TCP PC->DUT, {delay_ms} ms one-way delay: goodput vs the DUT's TCP_WND",
            "DUT TCP_WND (bytes)",
            {"PC->DUT measured": [(r.extra["x"], r.median) for r in records]},
            theory=[(r.extra["x"], r.theory or 0.0) for r in records],
            logx=True,
            theory_label="expected: TCP_WND / RTT",
            band_pct=_band(limits),
        ),
    )
    check(hil, scenario, records)


def _band(limits: dict[str, dict[str, float]]) -> tuple[float, float] | None:
    """The efficiency limits all steps share, for the chart's band (None when they differ)."""
    bands = {(lim.get("min_efficiency_pct"), lim.get("max_efficiency_pct")) for lim in limits.values()}
    if len(bands) != 1:
        return None
    lo, hi = bands.pop()
    return (lo, hi) if lo is not None and hi is not None else None


def expected_table(records: list[CaseRecord], delay_ms: int, limits: dict[str, dict[str, float]]) -> str:
    lines = [
        f"one-way delay {delay_ms} ms on the DUT's receive side; expected = TCP_WND / (delay + one segment "
        "and its ACK on the wire)",
        f"{'TCP_WND (B)':>12s} {'k x MSS':>8s} {'ping RTT':>9s} {'expected':>9s} {'measured':>9s} "
        f"{'meas/exp':>9s}  case",
    ]
    for r in records:
        ratio = f"{r.efficiency_pct:8.1f}%" if r.efficiency_pct is not None else f"{'-':>9s}"
        lines.append(
            f"{r.extra['x']:12.0f} {r.extra['tcp_wnd_segments']:8d} {r.extra['ping_rtt_ms']:7.2f}ms "
            f"{r.theory or 0.0:9.3f} {r.median:9.3f} {ratio}  {r.case}  limits {limits[r.case]}"
        )
    return "\n".join(lines) + "\n"


def _ladder_on_bench_link(hil: HilContext, scenario: str) -> None:
    """The ladder without a delay line: PC->DUT on the bench's link, which must rise with the
    window as the profile's `trends:` entry says (a real link: its own round trip sets the BDP)."""
    records = []
    for config, k in hil.dut.adapter.window_ladder:
        identity = hil.flash_config(config)
        wnd = int(identity.fields["tcp_wnd"])
        spec = TrafficSpec("tcp", "dut_rx", hil.duration_s)
        records.append(measure(hil, scenario, Point(f"dut_rx-{config}", spec, None, wnd, {"tcp_wnd_segments": k})))
    attach_text("DUT window ladder (bench link)", table(records, "TCP_WND (B)"))
    attach_png(
        "throughput vs DUT window",
        sweep_chart(
            "TCP PC->DUT on the bench link: goodput vs the DUT's TCP_WND",
            "DUT TCP_WND (bytes)",
            {"PC->DUT": [(r.extra["x"], r.median) for r in records]},
            logx=True,
        ),
    )
    found = _trend(hil, scenario, records)  # evaluated and attached before any limit can fail the test
    check(hil, scenario, records)
    assert not found, f"{BELOW_THRESHOLD}: {scenario}: PC->DUT throughput does not rise with the DUT's TCP_WND: " + (
        "; ".join(found)
    )


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
