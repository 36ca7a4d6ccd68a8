"""Latency under load (flent's RRUL idea; RFC 6349's Buffer Delay Percentage asked of ping): the
PC pings the far end (the DUT's own stack, or the peer host through a DUT in the path) every
50 ms, first on the idle path, then while TCP saturates it one way, the other way, and both at
once. Each case records the round trips under load (median, p99, mean), the idle ones beside them,
Buffer Delay % ((mean loaded - idle minimum) / idle minimum) and the queueing delay in ms, and the
bound the bench's shaper allows: a request or reply crossing a loaded direction can wait at most
that direction's tbf queue (hil.plumbing.netns.TbfShaping.queue_ms: rate x latency + burst, 51.2
ms for the virtual bench's 50 ms queue). `beyond_bound_ms` (p99 under load minus the idle
minimum and the loaded directions' queues) is what the DUT or the host added beyond the queues
the bench built; a threshold file limits it and may ask the queue to fill (`min_queue_delay_ms`).
A real link's queue is the device's own: no bound, the numbers are reported and gated as set.
DUT to DUT the partner's console pings the run's DUT where the PC would, beside its own iperf
(hil.console.background_ping), its idle round trips too."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import allure

from hil.checks import criteria, headline
from hil.console.background_ping import ConsolePing
from hil.console.dialects.capabilities import NotApplicable
from hil.directions import direction_name
from hil.errors import DutError
from hil.plumbing.in_path import InPathTopology
from hil.plumbing.netns import VirtualTopology
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.metrics import DIRECTION, TIMES, ScenarioShape
from hil.scenarios.rfc6349 import PathBaseline, baseline_from, buffer_delay_pct
from hil.scenarios.sweep import attach_text, check, confirm_miss
from hil.scenarios.tcp_watch import BASELINE_PINGS, bottleneck, idle_baseline
from hil.stats import summarize
from hil.theory import tcp_goodput_mbps
from hil.tools.ping import BackgroundPing, percentile
from hil.traffic.roles import TrafficSpec, run_traffic

if TYPE_CHECKING:
    from hil.console.dialects.base import DialectDriver
    from hil.dut.adapter import BenchLink
    from hil.session import HilContext

SCENARIO = "loaded_latency"
Load = Literal["dut_rx", "dut_tx", "both"]
LOADS: tuple[Load, ...] = ("dut_rx", "dut_tx", "both")
LOADED = TIMES | {"avg_ms", "p99_ms", "loss_pct", "idle_ms", "buffer_delay_pct", "queue_delay_ms", "bound_ms",
                  "beyond_bound_ms", "load_mbps"}  # fmt: skip
BASELINE_CONSOLE_INTERVAL_S = 0.01  # DUT to DUT: the partner's idle pings, each on its console's line
SATURATED_SHARE = 0.8  # a load below this share of the link's TCP goodput did not saturate the path


@dataclass(frozen=True)
class LoadPoint:
    load: Load


def case_name(load: Load, in_path: bool) -> str:
    return "both" if load == "both" else direction_name(load, in_path)


def queue_bound_ms(topology: BenchLink, load: Load) -> tuple[float | None, str]:
    """The longest the bench's shapers let a probe wait under `load` (None on an unshaped or real
    link), and how it was computed: each loaded direction crosses one tbf per shaped link."""
    if isinstance(topology, VirtualTopology):
        shapers = [topology.shaping] if topology.shaping is not None else []
    elif isinstance(topology, InPathTopology):
        shapers = [s for s in (topology.pc_shaping, topology.peer_shaping) if s is not None]
    else:
        return None, "a real link: its queues are the devices' own, no bound by construction"
    if not shapers:
        return None, "the link is not shaped: no queue of a known size"
    directions = 2 if load == "both" else 1
    per = [s.queue_ms() for s in shapers]
    how = " + ".join(f"tbf {s.rate_mbit:g} Mbit/s latency {s.latency} burst {s.burst}: {q:.2f} ms"
                     for s, q in zip(shapers, per, strict=True))  # fmt: skip
    return directions * sum(per), f"{directions} loaded direction(s) x ({how})"


@register
class LoadedLatency:
    name = "latency under load"
    marker = "loaded_latency"
    marker_doc = "ping latency while TCP saturates the path (RFC 6349 buffer delay, RRUL)"
    shapes = (ScenarioShape(SCENARIO, rf"(?:{DIRECTION}|both)", LOADED, "downlink"),)

    def cases(self, bench: BenchFacts) -> list[Case]:
        """`loaded_latency/dut_rx`, `/dut_tx`, `/both` (through a DUT in the path: `downlink`,
        `uplink`, `both`); both at once needs a console that serves and sends together."""
        return [
            Case(self, f"{SCENARIO}/{case_name(load, bench.in_path)}", LoadPoint(load),
                 needs=frozenset({"concurrent"}) if load == "both" else frozenset())
            for load in LOADS
        ]  # fmt: skip

    def run(self, hil: HilContext, case: Case) -> None:
        point: LoadPoint = case.point  # type: ignore[assignment]
        try:
            measure_under_load(hil, point.load)
        except AssertionError as miss:
            confirm_miss(hil, SCENARIO, miss, lambda: measure_under_load(hil, point.load, check_it=False))


def _load(hil: HilContext, load: Load, duration_s: float) -> tuple[float, dict[str, str]]:
    """TCP saturating the path as `load` says: the goodput (both directions' sum) and the tools' output."""
    if load == "both":
        r = hil.far_end.bidir("tcp", duration_s, None, hil.pc_side, None, None)
        return r.dut_tx.receiver_mbps + r.dut_rx.receiver_mbps, {**r.dut_tx.raw, **r.dut_rx.raw}
    t = run_traffic(TrafficSpec("tcp", load, duration_s), hil.pc_side, hil.far_end, hil.far_end.generator)
    return t.receiver_mbps, t.raw


def _prober(hil: HilContext, duration_s: float) -> tuple[DialectDriver, ConsolePing] | None:
    """DUT to DUT: the partner's console and its ping beside the load, where the PC's would be
    (None: the PC probes). Only a console whose ping runs beside its iperf can (`background_ping`)."""
    near = hil.pc_side.near
    if near is None:
        return None
    driver = getattr(near, "driver", None)
    start = getattr(driver, "background_ping", None)
    if driver is None or start is None:
        name = driver.info.name if driver is not None else "no console"
        raise NotApplicable(
            f"not applicable: latency under load DUT to DUT needs a partner console whose ping runs beside its "
            f"iperf, the project's (the partner speaks {name})"
        )
    return driver, start(hil.far_end.ip, duration_s)


def _idle_from(hil: HilContext, prober: DialectDriver) -> tuple[PathBaseline | None, str, str]:
    """The idle path's round trips from the partner's console (tcp_watch.idle_baseline's, DUT to DUT)."""
    stats, raw = prober.ping(hil.far_end.ip, BASELINE_PINGS, BASELINE_CONSOLE_INTERVAL_S, 10.0)
    rate, source = bottleneck(hil)
    found = baseline_from(stats, rate, source)
    return found, "" if found else f"{hil.far_end.name} answered none of {stats.sent} pings on the idle path", raw


def measure_under_load(hil: HilContext, load: Load, check_it: bool = True) -> CaseRecord:
    case = case_name(load, hil.in_path)
    limits = hil.thresholds.limits(SCENARIO, case)  # no threshold: an error before any traffic
    far = hil.far_end.name
    near = hil.pc_side.near.name if hil.pc_side.near is not None else "PC"  # DUT to DUT: the partner
    what = {"dut_rx": f"{near}->{far}", "dut_tx": f"{far}->{near}", "both": "both directions at once"}[load]
    title = f"{SCENARIO}/{case}: ping {near}<->{far} every 50 ms while TCP saturates {what}"
    allure.dynamic.feature("latency under load")
    allure.dynamic.story(f"{SCENARIO} {case}")
    allure.dynamic.title(title)
    start = time.time()
    duration = hil.duration_s
    prober = _prober(hil, duration)
    baseline, why, idle_raw = idle_baseline(hil) if prober is None else _idle_from(hil, prober[0])
    attach_text("idle path ping", idle_raw or why)
    if baseline is None:
        raise DutError(f"{SCENARIO}/{case}: no idle round trip ({why})")
    probe: BackgroundPing | ConsolePing = (
        BackgroundPing(hil.pc_side.netns_prefix, hil.far_end.ip, duration) if prober is None else prober[1]
    )
    with probe:
        load_mbps, raw = _load(hil, load, duration)
    for name, text in raw.items():
        attach_text(f"load: {name}", text)
    attach_text("ping under load", probe.text)
    stats = probe.stats()
    if not stats.rtts_ms:
        raise DutError(f"{SCENARIO}/{case}: {far} answered none of {stats.sent} pings under load")
    rtts = list(stats.rtts_ms)
    rec = make_record(SCENARIO, case, hil.dut.config.name, summarize(rtts), None, unit="ms")
    rec.loss_pct = stats.loss_pct
    mean = statistics.fmean(rtts)
    queue = mean - baseline.rtt_ms
    rec.measured |= {"avg_ms": round(mean, 4), "p99_ms": percentile(rtts, 99), "idle_ms": round(baseline.rtt_ms, 4),
                     "buffer_delay_pct": round(buffer_delay_pct(mean, baseline.rtt_ms), 1),
                     "queue_delay_ms": round(queue, 3), "load_mbps": round(load_mbps, 3)}  # fmt: skip
    bound, how = queue_bound_ms(hil.topology, load)
    if bound is not None:
        rec.measured["bound_ms"] = round(baseline.rtt_ms + bound, 3)
        rec.measured["beyond_bound_ms"] = round(rec.measured["p99_ms"] - rec.measured["bound_ms"], 3)
    ideal = tcp_goodput_mbps(hil.link_mbit, 1460) * (2 if load == "both" else 1)
    rec.extra |= {"sent": stats.sent, "received": stats.received, "bound": how, "idle": baseline.as_fields(),
                  "saturated": load_mbps >= SATURATED_SHARE * ideal, "load": what,
                  "probe": f"{near} pings {far}" + ("" if prober is None else " (its console)")}  # fmt: skip
    rec.traffic_s = round(duration, 3)
    hil.recorder.record(rec, start, time.time())
    attach_text("latency under load", table(rec, ideal))
    title = f"{title} ({summary(rec)})"
    if check_it:
        check(hil, SCENARIO, [rec], title=title)
    else:
        allure.dynamic.title(f"{title}: {headline(rec)}; {criteria(rec.metrics(), limits)}")
    return rec


def summary(rec: CaseRecord) -> str:
    m = rec.measured
    bound = f", bound {m['bound_ms']:.1f} ms" if "bound_ms" in m else ""
    return (f"idle {m['idle_ms']:.3f} ms, queueing {m['queue_delay_ms']:.2f} ms = buffer delay "
            f"{m['buffer_delay_pct']:.0f} %{bound}, load {m['load_mbps']:.1f} Mbit/s")  # fmt: skip


def table(rec: CaseRecord, ideal_mbps: float) -> str:
    m, x = rec.measured, rec.extra
    lines = [
        f"load: TCP {x['load']}, {m['load_mbps']:.2f} Mbit/s of {ideal_mbps:.2f} possible"
        + ("" if x["saturated"] else f" - NOT saturated (below {SATURATED_SHARE:.0%}): the path's queues may not fill"),
        f"idle: minimum {m['idle_ms']:.3f} ms of {x['idle']['samples']} pings (median {x['idle']['median_ms']} ms)",  # type: ignore[index]
        f"under load: {x['received']} of {x['sent']} pings answered; median {rec.median:.3f} ms, mean "
        f"{m['avg_ms']:.3f} ms, p99 {m['p99_ms']:.3f} ms, max {rec.maximum:.3f} ms",
        f"queueing delay (mean - idle) {m['queue_delay_ms']:.3f} ms; buffer delay {m['buffer_delay_pct']:.1f} %",
    ]
    if "bound_ms" in m:
        lines.append(
            f"bound: idle + {x['bound']} = {m['bound_ms']:.3f} ms; p99 beyond it {m['beyond_bound_ms']:+.3f} ms"
        )
    else:
        lines.append(f"bound: none ({x['bound']})")
    return "\n".join(lines) + "\n"
