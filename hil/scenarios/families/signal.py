"""Throughput against signal (ESP-IDF's attenuator sweeps; seed 003's distance study): the bench's
RF attenuator stepped from its start to its end, and at each step the DUT's radio as its console
tells it (RSSI; noise, MCS, PHY rate, retries and losses on the air where it gives them), then
one stream (TCP or UDP, one way) measured. The findings: the best step, how far the stream keeps
50 % and 10 % of it, the bad points (a drop of more than 30 % against the step before), where it
fell to zero and whether that was before the bench's expected range, and the floors the threshold
profile sets at an RSSI. On the virtual bench the station's radio follows a model
(hil.radio_model) and each step's goodput is checked against it.

The reassociation case takes the signal away under traffic (the attenuator to its end) and gives
it back: the time until the DUT is associated again, answers ping, and carries its stream at 90 %
of its rate before."""

from __future__ import annotations

import contextlib
import math
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import allure

from hil.checks import BenchFault, criteria
from hil.config.attenuator import AttenuatorConfig
from hil.config.thresholds import Limits
from hil.console.dialects.base import RADIO_COUNTS, RadioReading
from hil.errors import ConsoleTimeout, DutError
from hil.plumbing.attenuator import Attenuator, held
from hil.radio_model import rssi_for, tcp_goodput_mbps, udp_goodput_mbps
from hil.radio_model import step as model_step
from hil.report.background_charts import attach_chart
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.charts import signal_chart
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.metrics import DIRECTION, RECONNECT, THROUGHPUT, UDP, ScenarioShape
from hil.scenarios.recovery import reply_times
from hil.scenarios.signal_findings import Findings, SweepStep, analyse, floors_for
from hil.scenarios.sweep import attach_text, check
from hil.stats import summarize
from hil.tools.ping import ping_argv
from hil.traffic.roles import TrafficResult, TrafficSpec, run_traffic

if TYPE_CHECKING:
    from hil.session import DutSession, HilContext

STREAMS = ("tcp-dut_tx", "tcp-dut_rx", "udp-dut_tx", "udp-dut_rx")
UDP_PAYLOAD = 1470
TRIAL_S = 1.0  # each repetition at each step: the model's air is deterministic, a board's is averaged over repeat
ASSOCIATE_WAIT_S = 3.0  # after the settle time: how long a step waits for an association to come back
# a step's case (tcp-dut_tx-20dB), a stream's (tcp-dut_tx), a floor at an RSSI (tcp-dut_tx@-70dBm)
STEP_CASES = rf"(?:tcp|udp)-{DIRECTION}(?:-\d+(?:\.\d+)?dB|@-\d+dBm)?"
SIGNAL = frozenset({"rssi_dbm", "phy_mbps", "retry_pct"})
REASSOCIATE = RECONNECT | {"reassociate_ms", "throughput_back_ms"}
LOST_S, BEFORE_S, AFTER_S = 2.5, 1.5, 3.0  # the signal gone longer than a beacon timeout; 3 s to come back
BACK_AT_PCT = 90.0
POLL_S = 0.05
JOINED_LINE = "WIFI status=connected"  # the project's firmware re-joining a lost link (wifi_cmd.h)
LOST_LINE = "WIFI status=disconnected"  # ... and losing it
STOCK_REJOIN = (
    "the reassociation case hears the project's firmware say it re-joined (`WIFI status=connected`): a stock "
    "firmware's console has no such line"
)
PAIR_REJOIN = (
    "the reassociation case times the PC's stream and pings through the station: in a Wi-Fi pair the PC is no "
    "end of the traffic (the sweep's steps run between the two DUTs)"
)
NO_WIFI = "the signal sweep needs a Wi-Fi DUT (a `wifi:` section in the bench file): this DUT is wired"
NO_ATTENUATOR = (
    "the bench file gives the Wi-Fi DUT no attenuator (wifi.attenuator: a programmable RF attenuator's command "
    "template, or virtual: true on the virtual bench): the signal sweep has nothing to step; see docs/signal.md"
)


@register
class SignalSweep:
    name = "throughput against signal"
    marker = "signal"
    marker_doc = "throughput against RSSI over the bench's attenuator, and reassociation after the signal was lost"
    shapes = (
        ScenarioShape("signal", STEP_CASES, THROUGHPUT | UDP | SIGNAL, "tcp-dut_tx-20dB"),
        ScenarioShape("reassociate", r"signal_lost", REASSOCIATE, "signal_lost"),
    )

    def cases(self, bench: BenchFacts) -> list[Case]:
        why = NO_WIFI if not bench.wifi else NO_ATTENUATOR if bench.attenuator is None else None
        out = [Case(self, f"signal/{s}", s, topology="endpoint", skip=why) for s in STREAMS]
        stock = bench.dialect is not None and bench.dialect.stock
        rejoin = why or (STOCK_REJOIN if stock else None) or (PAIR_REJOIN if bench.partner is not None else None)
        return [*out, Case(self, "reassociate/signal_lost", "reassociate", topology="endpoint", skip=rejoin)]

    def run(self, hil: HilContext, case: Case) -> None:
        if case.point == "reassociate":
            reassociation(hil)
        else:
            sweep(hil, str(case.point))


@dataclass(frozen=True)
class Station:
    """The station whose signal is swept: the run's DUT, or in a Wi-Fi pair whose run's DUT is the
    SoftAP its partner (the attenuator sits in front of the station); `flipped`: the station
    receives what the run's DUT sends (`dut_tx` is its receive direction)."""

    session: DutSession
    flipped: bool

    @property
    def name(self) -> str:
        return self.session.config.name


def _station(hil: HilContext) -> Station:
    wifi = getattr(hil.dut.config, "wifi", None)
    second = hil.second
    if wifi is not None and wifi.mode == "softap" and second is not None and second.relation == "beside":
        return Station(second, True)
    return Station(hil.dut, False)


def _attenuator(station: Station) -> AttenuatorConfig:
    wifi = getattr(station.session.config, "wifi", None)
    if wifi is None or wifi.attenuator is None:  # the contract skipped the case: a run without it is a bug
        raise TypeError("the signal family ran on a DUT without wifi.attenuator")
    return wifi.attenuator


@contextlib.contextmanager
def _attenuated(cfg: AttenuatorConfig, station: Station) -> Iterator[Attenuator]:
    """The attenuator held at its start value around the case. (On the virtual bench the AP's queue
    towards the station is the station tap's own FIFO, any qdisc passed by; in a Wi-Fi pair the
    station firmware's, management frames first: firmware/host/src/air_queue.h.)"""
    air_file = getattr(station.session.adapter, "air_file", None) if cfg.virtual else None
    with held(cfg, air_file) as unit:
        yield unit


def _radio(station: Station, wait_s: float) -> RadioReading:
    """The station's radio, waiting up to `wait_s` for an association (a re-join under way)."""
    _, driver = station.session.require_console()
    wifi = station.session.config.wifi  # type: ignore[attr-defined]
    deadline = time.monotonic() + wait_s
    while True:
        reading = driver.radio(wifi)
        if reading.associated or time.monotonic() >= deadline:
            return reading
        time.sleep(0.2)


def _spec(stream: str, hil: HilContext) -> TrafficSpec:
    proto, direction = stream.split("-")
    udp = proto == "udp"
    return TrafficSpec(proto, direction, TRIAL_S, length=UDP_PAYLOAD if udp else None,  # type: ignore[arg-type]
                       rate_mbps=hil.link_mbit if udp else None)  # fmt: skip


def _rejoined(before: RadioReading, now: RadioReading) -> bool:
    """The station joined again since `before`: its association was lost in between, whatever it
    is now (a console that does not count its joins: not known, False)."""
    return before.joins is not None and now.joins is not None and now.joins > before.joins


def _counts(before: RadioReading, after: RadioReading) -> dict[str, int] | None:
    if before.counts is None or after.counts is None:
        return None
    return {k: after.counts[k] - before.counts[k] for k in RADIO_COUNTS}


def _model_mbps(
    stream: str, atten_db: float, counts: dict[str, int] | None, flipped: bool = False
) -> tuple[float | None, dict[str, float]]:
    """The radio model's goodput at this attenuation (virtual bench): UDP from the datagram size,
    TCP from the segments and ACKs its air carried (the receiver's ACK habit, counted); `flipped`:
    the counts are a station's that receives the run's DUT's `dut_tx` (a Wi-Fi pair)."""
    rssi = rssi_for(atten_db)
    if stream.startswith("udp"):
        return udp_goodput_mbps(UDP_PAYLOAD, rssi), {}
    if counts is None:
        return None, {}
    tx = stream.endswith("dut_tx") != flipped  # the station sends the data
    data = counts["tx_frames"] if tx else counts["rx_frames"]
    acks = counts["rx_frames"] if tx else counts["tx_frames"]
    if data == 0:
        return None, {}
    ratio = acks / data
    return tcp_goodput_mbps(1460, rssi, ratio), {"acks_per_segment": round(ratio, 4)}


def _measure_step(
    hil: HilContext, stream: str, atten_db: float, virtual: bool, station: Station
) -> tuple[CaseRecord, SweepStep]:
    case = f"{stream}-{atten_db:g}dB"
    start = time.time()
    before = _radio(station, ASSOCIATE_WAIT_S)
    runs: list[TrafficResult] = []
    if before.associated:
        spec = _spec(stream, hil)
        for i in range(1, hil.repeat + 1):
            try:
                r = run_traffic(spec, hil.pc_side, hil.far_end, hil.far_end.generator)
            except (DutError, ConsoleTimeout):
                now = _radio(station, 0)
                if now.associated and not _rejoined(before, now):
                    raise  # associated all along: the DUT's failure, not the signal's
                break  # the association went during the run: this step carries nothing
            for name, text in r.raw.items():
                attach_text(f"{case} run {i}: {name}", text)
            runs.append(r)
    after = _radio(station, 0) if before.associated else before
    rejoined = _rejoined(before, after)  # lost during the step, joined again before its end
    associated = before.associated and len(runs) == hil.repeat and not rejoined
    values = [r.receiver_mbps for r in runs] if associated else [0.0]
    counts = _counts(before, after)
    theory, model_extra = _model_mbps(stream, atten_db, counts, station.flipped) if virtual else (None, {})
    rec = make_record("signal", case, hil.dut.config.name, summarize(values), theory)
    rec.traffic_s = round(sum(r.duration_s or TRIAL_S for r in runs), 3)
    rec.extra.update(atten_db=atten_db, associated=associated, radio_source=before.source, x=atten_db)
    rec.extra.update(before.as_fields())
    if rejoined:
        rec.extra["rejoined"] = (
            f"the station lost its association during the step and joined again ({before.joins} -> {after.joins} joins)"
        )
    if station.session is not hil.dut:  # a Wi-Fi pair: the radio is the SoftAP's station's
        rec.extra["radio_of"] = station.name
    if counts is not None:
        frames = counts["tx_frames"] + counts["rx_frames"]
        retries = counts["tx_retries"] + counts["rx_retries"]
        rec.extra["air"] = counts
        rec.measured["retry_pct"] = round(100 * retries / frames, 3) if frames else 0.0
    if before.rssi_dbm is not None:
        rec.measured["rssi_dbm"] = float(before.rssi_dbm)
    if before.phy_mbps is not None:
        rec.measured["phy_mbps"] = before.phy_mbps
    if virtual:
        m = model_step(atten_db)
        rec.extra["model"] = {"rssi_dbm": m.rssi_dbm, "mcs": m.mcs, "phy_mbps": m.phy_mbps, "per_pct": m.per_pct,
                              "alive": m.alive, "mbps": round(theory, 3) if theory is not None else None,
                              **model_extra}  # fmt: skip
    if runs and stream.startswith("udp"):
        rec.loss_pct = max(r.loss_pct or 0.0 for r in runs)
        rec.extra["offered_mbps"] = runs[0].spec.rate_mbps
        rec.generator_limited = any(r.generator_limited for r in runs)
    # whose shortfall it would be: a DUT's (the run's, or in a Wi-Fi pair either DUT) is its own
    dut_sent = any(r.sender_is_dut for r in runs) if runs else stream.endswith("dut_tx")
    rec.extra["sender"] = "dut" if dut_sent else "bench"
    hil.recorder.record(rec, start, time.time())
    return rec, SweepStep(atten_db, before.rssi_dbm, rec.median, associated)


def sweep(hil: HilContext, stream: str) -> None:
    allure.dynamic.feature("throughput against signal")
    allure.dynamic.story(f"signal {stream}")
    station = _station(hil)
    cfg = _attenuator(station)
    entries = hil.thresholds.scenarios.get("signal", {})
    hil.thresholds.limits("signal", f"{stream}-{cfg.start:g}dB")  # no limits: an error before the attenuator moves
    floors = floors_for(stream, dict(entries))
    steps_db = cfg.steps()  # every step: a bad point is a drop between neighbours, which a coarser sweep makes
    allure.dynamic.parameter("steps", f"{steps_db[0]:g} .. {steps_db[-1]:g} dB, {len(steps_db)} steps")
    records: list[CaseRecord] = []
    steps: list[SweepStep] = []
    with _attenuated(cfg, station) as unit:
        allure.dynamic.parameter("attenuator", unit.describe())
        if station.flipped:
            allure.dynamic.parameter("radio", f"{station.name}, the station of SoftAP {hil.dut.config.name}")
        for db in steps_db:
            with allure.step(f"{db:g} dB"):
                unit.set(db)
                time.sleep(cfg.settle_s)
                rec, step = _measure_step(hil, stream, db, cfg.virtual, station)
            records.append(rec)
            steps.append(step)
            if step.zero:
                break  # fallen to zero: weaker steps carry nothing either
    findings = analyse(stream, steps, cfg.expected_range_db, floors)
    _report(hil, stream, cfg, records, steps, findings, floors, station)
    measured = [r for r, s in zip(records, steps, strict=True) if not s.zero]
    for r in records[len(measured) :]:  # the step it fell to zero at: the sweep's rule judges it
        r.extra["no_criterion"] = "the stream fell to zero here: the fall-to-zero rule judges the sweep"
        hil.recorder.set_verdict(r, "no criterion")
    failures = findings.failures()
    try:
        check(hil, "signal", measured)
    except BenchFault as fault:
        if failures:  # the DUT's own failures first; the bench's shortfall named beside them
            raise AssertionError("; ".join([*failures, str(fault)])) from None
        raise
    except AssertionError as miss:
        raise AssertionError("; ".join([str(miss), *failures])) from None
    if failures:
        raise AssertionError("; ".join(failures))


def _report(
    hil: HilContext,
    stream: str,
    cfg: AttenuatorConfig,
    records: list[CaseRecord],
    steps: list[SweepStep],
    findings: Findings,
    floors: dict[int, float],
    station: Station,
) -> None:
    model = [(s.atten_db, r.theory) for r, s in zip(records, steps, strict=True) if r.theory is not None]
    if cfg.virtual:  # the model's own value at a step that carried nothing
        model = sorted({*model, *((s.atten_db, 0.0) for s in steps if s.zero)})
    lines = [f"{'dB':>6} {'RSSI':>5} {'MCS':>4} {'PHY':>6} {'Mbit/s':>8} {'sd':>6} {'model':>8} {'eff %':>6} "
             f"{'retry %':>8}  note"]  # fmt: skip
    for r, s in zip(records, steps, strict=True):
        note = "no association" if not s.associated else "zero" if s.zero else ""
        note += " BAD POINT" if s.atten_db in findings.bad_at_db else ""
        lines.append(
            f"{s.atten_db:>6g} {s.rssi_dbm if s.rssi_dbm is not None else '-':>5} {r.extra.get('mcs', '-')!s:>4} "
            f"{r.extra.get('phy_mbps', '-')!s:>6} {r.median:>8.3f} {r.stdev:>6.3f} "
            f"{(f'{r.theory:.3f}' if r.theory is not None else '-'):>8} "
            f"{(f'{r.efficiency_pct:.1f}' if r.efficiency_pct is not None else '-'):>6} "
            f"{r.measured.get('retry_pct', '-')!s:>8}  {note}"
        )
    lines += ["", findings.summary(), *findings.failures()]
    attach_text(f"signal {stream}: the steps", "\n".join(lines))
    best = findings.best_mbps
    attach_chart(
        f"signal {stream}: goodput vs RSSI and attenuation",
        signal_chart,
        f"{stream}: goodput against signal ({hil.dut.config.name}"
        + (f", {station.name}'s radio)" if station.flipped else ")"),
        [(s.atten_db, s.rssi_dbm, s.mbps) for s in steps],
        model=model,
        bad_db=findings.bad_at_db,
        zero_db=findings.fell_to_zero_db,
        floors=floors,
        keeps=[(pct, best * pct / 100) for pct in findings.keeps],
        reporter=f"station {station.name}" if station.flipped else "the DUT",
    )
    measured = [r for r, s in zip(records, steps, strict=True) if not s.zero]
    rules = "; ".join(x for x in (_steps_criteria(hil, measured), findings.criteria()) if x)
    allure.dynamic.title(f"signal/{stream}: {findings.summary()}; {rules}")


def _steps_criteria(hil: HilContext, records: list[CaseRecord]) -> str:
    """Each per-step limit with its worst step against it: "efficiency 99.1 % >= 97.0 % (24 dB)"."""
    if not records:
        return "no step carried traffic"
    limits = hil.thresholds.limits("signal", records[0].case)
    if limits.no_criterion is not None:
        return f"each step: no criterion ({limits.no_criterion})"
    parts = []
    for bound, metric, limit in limits.bounds():
        known = [(v, r) for r in records if (v := r.metrics().get(metric)) is not None]
        if not known:
            parts.append(criteria({}, Limits.model_validate({f"{bound}_{metric}": limit})))
            continue
        value, worst = (min if bound == "min" else max)(known, key=lambda vr: vr[0])
        one = Limits.model_validate({f"{bound}_{metric}": limit})
        parts.append(f"{criteria({metric: value}, one)} (worst step, {worst.extra['atten_db']:g} dB)")
    return ", ".join(parts)


# ---- reassociation under traffic ---------------------------------------------------------------


def _rx_bytes(pid: int, ifname: str) -> int | None:
    """Bytes received on an interface of the namespace process `pid` runs in (/proc/PID/net/dev)."""
    try:
        with open(f"/proc/{pid}/net/dev") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name.strip() == ifname:
                    return int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return None


def reassociation(hil: HilContext) -> None:
    allure.dynamic.feature("throughput against signal")
    allure.dynamic.story("reassociation after the signal was lost")
    station = _station(hil)
    cfg = _attenuator(station)
    hil.thresholds.limits("reassociate", "signal_lost")  # no limits: an error before the attenuator moves
    total_s = BEFORE_S + LOST_S + AFTER_S
    spec = TrafficSpec("udp", "dut_tx", total_s, length=UDP_PAYLOAD, rate_mbps=hil.link_mbit)
    ping_args = ping_argv(hil.pc_side.netns_prefix, hil.far_end.ip, interval_s=0.05, deadline_s=math.ceil(total_s + 1),
                          timestamps=True)  # fmt: skip
    samples: list[tuple[float, int]] = []
    results: list[TrafficResult] = []
    failed: list[BaseException] = []
    console, _ = hil.dut.require_console()
    joined: list[float] = []  # when the DUT said it was associated again (its own event line)
    lost: list[float] = []  # ... and that it had lost the association

    def hear(line: str, at: float) -> None:
        if line.startswith(JOINED_LINE):
            joined.append(at)
        elif line.startswith(LOST_LINE):
            lost.append(at)

    with _attenuated(cfg, station) as unit, console.listening(hear):
        ping = subprocess.Popen(ping_args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                got = _rx_bytes(ping.pid, "veth-pc")
                if got is not None:
                    samples.append((time.time(), got))
                time.sleep(POLL_S)

        def stream() -> None:
            try:
                results.append(run_traffic(spec, hil.pc_side, hil.far_end, hil.far_end.generator))
            except BaseException as exc:  # judged below
                failed.append(exc)

        sampler = threading.Thread(target=sample, name="signal-rx-bytes", daemon=True)
        sender = threading.Thread(target=stream, name="signal-stream")
        try:
            sampler.start()
            started = time.time()
            sender.start()
            time.sleep(BEFORE_S)
            lost_at = time.time()
            unit.set(cfg.max_db)
            time.sleep(LOST_S)
            unit.set(cfg.start)
            back_at = time.time()  # the console is the traffic run's until its report: the DUT's event line tells
            sender.join(timeout=total_s * 2 + 30)
            ping_out, _ = ping.communicate(timeout=total_s + 15)
        finally:
            stop.set()
            if ping.poll() is None:
                ping.kill()
                ping.wait()
    attach_text("ping PC -> DUT (-D: wall-clock times)", ping_out)
    rates = _rates(samples)
    before = [r for t, r in rates if started + 0.5 <= t <= lost_at]
    rate_before = statistics.median(before) if before else 0.0
    back = next((t for t, r in rates if t > back_at and r >= rate_before * BACK_AT_PCT / 100), None)
    replies = reply_times(ping_out)
    ping_back = next((t for t in replies if t > back_at), None)
    associated_at = next((t for t in joined if t > back_at), None)
    held_on = not lost and _radio(station, 0).associated  # a beacon timeout longer than the loss kept it
    if held_on:
        associated_at = back_at
    if associated_at is None:
        state = "associated" if _radio(station, 0).associated else "not associated"
        raise DutError(
            f"the DUT printed no `{JOINED_LINE}` within {AFTER_S:g} s of the signal coming back ({state} now)"
        )
    inf = float("inf")
    values = {
        "reassociate_ms": round((associated_at - back_at) * 1000, 1),
        "ping_recovery_ms": round((ping_back - back_at) * 1000, 1) if ping_back else inf,
        "throughput_back_ms": round((back - back_at) * 1000, 1) if back else inf,
    }
    rec = make_record("reassociate", "signal_lost", hil.dut.config.name, summarize([values["throughput_back_ms"]]),
                      None, unit="ms")  # fmt: skip
    rec.measured.update(values)
    rec.extra.update(lost_s=round(back_at - lost_at, 3), lost_at_db=cfg.max_db, back_at_db=cfg.start,
                     association_lost=not held_on,
                     rate_before_mbps=round(rate_before * 8 / 1e6, 3), stream=spec.case_id,
                     stream_failed=str(failed[0]) if failed else None)  # fmt: skip
    rec.traffic_s = round(total_s, 3)
    hil.recorder.record(rec, started, time.time())
    attach_text(
        "recovery",
        f"signal gone ({cfg.max_db:g} dB) for {back_at - lost_at:.2f} s, {BEFORE_S:g} s into a {total_s:g} s UDP "
        f"stream DUT -> PC at {rate_before * 8 / 1e6:.2f} Mbit/s\n"
        + (
            f"associated again {values['reassociate_ms']:.0f} ms after the signal came back ({cfg.start:g} dB)\n"
            if not held_on
            else "the association held through the loss (no beacon timeout): nothing to re-join\n"
        )
        + f"ping answered again after {values['ping_recovery_ms']:.0f} ms\n"
        f"the stream back at {BACK_AT_PCT:g} % of its rate after {values['throughput_back_ms']:.0f} ms\n\n"
        + "\n".join(f"{t - started:7.2f} s {r * 8 / 1e6:8.2f} Mbit/s" for t, r in rates),
    )
    check(hil, "reassociate", [rec], title=f"reassociate/signal_lost (signal gone {back_at - lost_at:.1f} s; ping back "
          f"after {values['ping_recovery_ms']:.0f} ms, the PC's own ARP re-resolution)")  # fmt: skip


def _rates(samples: list[tuple[float, int]], window_s: float = 0.2) -> list[tuple[float, float]]:
    """Bytes per second over each `window_s` of the samples, at the window's end."""
    out = []
    j = 0
    for i, (t, b) in enumerate(samples):
        while j < i and t - samples[j][0] > window_s:
            j += 1
        if j < i and t - samples[j][0] >= window_s / 2:
            out.append((t, (b - samples[j][1]) / (t - samples[j][0])))
    return out
