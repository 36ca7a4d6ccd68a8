"""Records every number of a run.

Each finished case appends one JSON line to ``results.jsonl`` at once (a killed run keeps what
it finished), writes its numbers as Allure 3 performance metrics (``*-perf.json``) and keeps a
row for the terminal summary.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hil.stats import Summary

if TYPE_CHECKING:
    from hil.plumbing.cpu_pressure import CpuPressure
    from hil.plumbing.cpu_share import CpuShare


@dataclass
class CaseRecord:
    scenario: str
    case: str
    dut: str
    unit: str
    values: list[float]
    median: float
    minimum: float
    maximum: float
    stdev: float
    theory: float | None
    efficiency_pct: float | None
    loss_pct: float | None = None
    jitter_ms: float | None = None
    # a sender of the bench (never the DUT) fell short of its offered rate (hil.bench_faults.GENERATOR_SHORT)
    generator_limited: bool = False
    traffic_s: float = 0.0  # seconds of traffic the numbers come from (one record per traffic run carries it)
    test: str | None = None  # the pytest case that measured it
    threshold: dict[str, float] = field(default_factory=dict)
    verdict: str = "recorded"  # recorded -> passed | below threshold
    extra: dict[str, object] = field(default_factory=dict)
    measured: dict[str, float] = field(default_factory=dict)  # a scenario's own metrics (p99_ms, late, ...)
    # the case against the --baseline run, per compared metric (hil.results.baseline.Comparison fields)
    baseline: dict[str, dict[str, object]] = field(default_factory=dict)

    def metrics(self) -> dict[str, float]:
        """Every metric of the case by name, the ones limits and reports use: the median in its
        unit (`mbps`; `kbps` for a console's slower channel; `latency_ms` for ping: the p99 when
        replies were timed, else the average), `efficiency_pct`, `loss_pct`, `jitter_ms`, the
        spread over repetitions (`sd_mbps`, `sd_kbps`, `sd_ms`), and what the scenario measured itself."""
        out: dict[str, float] = {}
        if self.unit == "Mbit/s":
            out["mbps"] = self.median
            out["sd_mbps"] = self.stdev
        elif self.unit == "kbit/s":
            out["kbps"] = self.median
            out["sd_kbps"] = self.stdev
        elif self.unit == "ms":
            out["median_ms"] = self.median
            out["sd_ms"] = self.stdev
            out["latency_ms"] = self.measured.get("p99_ms", self.measured.get("avg_ms", self.median))
        if self.efficiency_pct is not None:
            out["efficiency_pct"] = self.efficiency_pct
        if self.loss_pct is not None:
            out["loss_pct"] = self.loss_pct
        if self.jitter_ms is not None:
            out["jitter_ms"] = self.jitter_ms
        return out | self.measured


# the metric that carries a case's number, by the record's unit, and its spread over the repetitions
PRIMARY_METRIC = {"Mbit/s": "mbps", "kbit/s": "kbps", "ms": "median_ms", "% lost": "loss_pct"}
SPREAD_METRIC = {"mbps": "sd_mbps", "kbps": "sd_kbps", "median_ms": "sd_ms"}


def metric_unit(name: str) -> str:
    """A metric's unit from its name: *mbps Mbit/s, *kbps kbit/s, *bytes_per_s B/s, *_pct %,
    *_ms ms, anything else a count."""
    if name.endswith("mbps"):
        return "Mbit/s"
    if name.endswith("kbps"):
        return "kbit/s"
    if name.endswith("bytes_per_s"):
        return "B/s"
    if name.endswith("_pct"):
        return "%"
    if name.endswith("_ms"):
        return "ms"
    if name == "heap_free":
        return "B"
    return ""


# the metrics kept in the history and followed by the trend gate (hil.report.trends), each with a
# direction (metric_better): throughput and its RFC 2544 / RFC 6349 figures, loss, jitter, latency
# (median and p99), TCP efficiency and retransmissions, the DUT's CPU per Mbit/s and least free
# memory. Not `efficiency_pct`: the throughput over a constant, the same series twice
TREND_METRICS = frozenset({
    "mbps", "kbps", "median_ms", "latency_ms", "loss_pct", "jitter_ms", "tcp_efficiency_pct", "dut_tcp_retrans",
    "dut_cpu_per_mbps", "pool_free", "heap_free", "ndr_mbps", "pdr_mbps", "ttr", "loaded_rtt_ms", "buffer_delay_pct",
})  # fmt: skip


def trend_values(rec: CaseRecord) -> dict[str, float]:
    """The record's TREND_METRICS (the DUT's CPU per Mbit/s from its CPU share and throughput)."""
    metrics = rec.metrics()
    cpu, rate = metrics.get("dut_cpu_pct"), metrics.get("mbps")
    if isinstance(cpu, int | float) and isinstance(rate, int | float) and rate > 0:
        metrics = {**metrics, "dut_cpu_per_mbps": float(cpu) / float(rate)}
    return {k: float(v) for k, v in metrics.items() if k in TREND_METRICS and isinstance(v, int | float)}


def metric_better(name: str) -> str:
    """Which way a metric improves: throughput, efficiency and free memory up, everything else down."""
    rate = name.endswith(("mbps", "kbps", "bytes_per_s"))
    return "higher" if rate or name in ("efficiency_pct", "tcp_efficiency_pct", "pool_free", "heap_free") else "lower"


def make_record(
    scenario: str, case: str, dut: str, summary: Summary, theory: float | None, unit: str = "Mbit/s"
) -> CaseRecord:
    eff = 100.0 * summary.median / theory if theory else None
    return CaseRecord(
        scenario, case, dut, unit, list(summary.values), summary.median, summary.minimum, summary.maximum,
        summary.stdev, theory, eff,
    )  # fmt: skip


class Recorder:
    def __init__(self, results_dir: Path, allure_dir: Path | None, profile: str = "") -> None:
        self.results_dir = results_dir
        self.profile = profile  # the run profile (quick, full), kept in every line: baselines compare like with like
        self.allure_dir = allure_dir
        self.jsonl = results_dir / "results.jsonl"
        self.rows: list[CaseRecord] = []
        self.link: dict[str, object] = {}  # facts of the DUT's link (Wi-Fi RSSI, channel) kept with every record
        self.dut_facts: dict[str, object] = {}  # the DUT's state when the test began (free heap), with every record
        # defects planted in the DUT's firmware on purpose (--plant-defect: the suite's self-test), with every record
        self.planted: dict[str, int] = {}
        # the build measured (hil.dut.build_identity: version, build digest, config), with every record
        self.firmware: dict[str, str] = {}
        # the second DUT of a bench of two (its name and build), with every record: `dut_behind` (behind
        # the DUT in the path) or `dut_partner` (beside it on its link, the other end of its traffic)
        self.second: dict[str, str] = {}
        self.second_key = "dut_behind"
        self.dut_cpu: Callable[[float, float], CpuShare | None] | None = None
        self.pc_cpu: Callable[[float, float], CpuPressure | None] | None = None
        self.test: str | None = None  # the pytest case running now (set by the pytest layer)
        # what a reviewer must read beside the verdicts (a case passed by the majority of its trials)
        self.notes: list[str] = []
        self.run_id = time.strftime("%Y%m%dT%H%M%S")
        results_dir.mkdir(parents=True, exist_ok=True)

    def set_link(self, facts: dict[str, object]) -> None:
        """The link as the DUT reported it when the test started (e.g. Wi-Fi RSSI and channel)."""
        self.link = dict(facts)

    def set_dut_facts(self, facts: dict[str, object]) -> None:
        """What the DUT's console told of its state when the test began (ESP-IDF: free heap)."""
        self.dut_facts = dict(facts)

    def set_dut_cpu(self, window: Callable[[float, float], CpuShare | None] | None) -> None:
        """How to tell the share of a host core a DUT on the bench PC got between two times
        (hil.plumbing.cpu_share); None for a board with its own CPU."""
        self.dut_cpu = window

    def set_pc_cpu(self, window: Callable[[float, float], CpuPressure | None] | None) -> None:
        """How to tell how contended the bench PC's CPUs were between two times
        (hil.plumbing.cpu_pressure); None where the kernel does not say."""
        self.pc_cpu = window

    def record(self, rec: CaseRecord, start: float, stop: float) -> None:
        """Writes the record before any threshold is checked."""
        self.rows.append(rec)
        rec.test = rec.test or self.test
        if self.link:
            rec.extra.setdefault("link", dict(self.link))
        if self.dut_facts:
            rec.extra.setdefault("dut", dict(self.dut_facts))
        if self.planted:
            rec.extra.setdefault("planted_defects", dict(self.planted))
        if self.firmware:
            rec.extra.setdefault("firmware", dict(self.firmware))
        if self.second:
            rec.extra.setdefault(self.second_key, dict(self.second))
            if self.second_key == "dut_partner":  # DUT to DUT: which way this record's traffic went
                a, b = rec.dut, self.second.get("name", "")
                way = {"dut_tx": f"{a} -> {b}", "dut_rx": f"{b} -> {a}"}
                found = next((w for k, w in way.items() if k in rec.case), None)
                if found is not None:
                    rec.extra.setdefault("flow", found)
        share = self.dut_cpu(start, stop) if self.dut_cpu is not None else None
        if share is not None:  # evidence for a reviewer: how the DUT's program shared the bench PC (never an excuse)
            rec.extra["dut_cpu"] = share.as_fields()
        pressure = self.pc_cpu(start, stop) if self.pc_cpu is not None else None
        if pressure is not None:  # evidence only: it does not tell a loaded PC from an idle one well enough to gate
            rec.extra["pc_cpu"] = pressure.as_fields()
        now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        line = {"run": self.run_id, "time": now, "profile": self.profile, **asdict(rec)}
        with self.jsonl.open("a") as f:
            f.write(json.dumps(line) + "\n")
            f.flush()
        if self.allure_dir is not None:
            self._write_metrics(rec, start, stop)

    def note(self, text: str) -> None:
        """A line the run's terminal summary prints after the results (the case's page says it too)."""
        self.notes.append(text)

    def latest(self, scenario: str | None = None, case_prefix: str = "") -> list[CaseRecord]:
        """The latest record of every case of this run (of one scenario, cases starting with
        `case_prefix`), in the order they were last measured."""
        found: dict[tuple[str, str], CaseRecord] = {}
        for r in self.rows:
            if scenario in (None, r.scenario) and r.case.startswith(case_prefix):
                found.pop((r.scenario, r.case), None)
                found[(r.scenario, r.case)] = r
        return list(found.values())

    def set_verdict(self, rec: CaseRecord, verdict: str) -> None:
        """The case's verdict, appended to results.jsonl with the limits it was checked against
        and its comparison with the baseline when there is one."""
        rec.verdict = verdict
        with self.jsonl.open("a") as f:
            verdict_line = {"run": self.run_id, "scenario": rec.scenario, "case": rec.case, "dut": rec.dut}
            also = {"threshold": rec.threshold} if rec.threshold else {}
            also |= {"baseline": rec.baseline} if rec.baseline else {}
            f.write(json.dumps({**verdict_line, "verdict": verdict, **also}) + "\n")

    def _write_metrics(self, rec: CaseRecord, start: float, stop: float) -> None:
        """Allure 3 performance metrics keyed per case and metric (`baseline/tcp-dut_tx/mbps`), so
        its metrics page and trends show each case's own number, in the metric's unit."""
        mid = f"{rec.scenario}/{rec.case}"
        # the spread is in the summary; each repetition under one key gives the page its count,
        # minimum and maximum
        samples = [(k, v) for k, v in rec.metrics().items() if not k.startswith("sd_")]
        if rec.unit in ("Mbit/s", "kbit/s") and len(rec.values) > 1:
            samples += [(f"runs_{PRIMARY_METRIC[rec.unit]}", v) for v in rec.values]
        metrics = [
            {
                "id": mid,
                "key": f"{mid}/{key}",
                "value": round(value, 4),
                "start": int(start * 1000),
                "stop": int(stop * 1000),
                "title": f"{mid} {key}",
                "unit": metric_unit(key),
                "better": metric_better(key),
                "group": rec.scenario,
            }
            for key, value in samples
        ]
        self.allure_dir.mkdir(parents=True, exist_ok=True)
        (self.allure_dir / f"{uuid.uuid4()}-perf.json").write_text(json.dumps(metrics, indent=1))


def summary_table(rows: list[CaseRecord]) -> list[str]:
    """The table printed at the end of a run, one block per unit: throughput rows in Mbit/s with
    theory, efficiency and loss; a console's throughput in kbit/s with its bytes per second,
    nominal rate, efficiency and damaged bytes; latency rows in ms with p99 and loss; stream rows
    with their loss, late and out-of-order packets."""
    if not rows:
        return []
    out: list[str] = []
    blocks = (("Mbit/s", _throughput_rows), ("kbit/s", _console_rows), ("ms", _latency_rows), ("% lost", _stream_rows))
    for unit, fmt in blocks:
        block = [r for r in rows if r.unit == unit]
        if block:
            out += [*fmt(block), ""]
    return out[:-1]


def _verdict(r: CaseRecord) -> str:
    gen = " (generator-limited)" if r.generator_limited and r.verdict != "generator-limited" else ""
    return f"{r.verdict}{gen}"


def _throughput_rows(rows: list[CaseRecord]) -> list[str]:
    head = (
        f"{'throughput (Mbit/s)':40s} {'median':>9s} {'min':>9s} {'max':>9s} {'sd':>6s} {'theory':>8s} "
        f"{'eff %':>6s} {'loss %':>7s}  verdict"
    )
    out = [head, "-" * len(head)]
    for r in rows:
        theory = f"{r.theory:8.2f}" if r.theory else f"{'-':>8s}"
        eff = f"{r.efficiency_pct:6.1f}" if r.efficiency_pct is not None else f"{'-':>6s}"
        loss = f"{r.loss_pct:7.3f}" if r.loss_pct is not None else f"{'-':>7s}"
        out.append(
            f"{r.scenario + '/' + r.case:40s} {r.median:9.2f} {r.minimum:9.2f} {r.maximum:9.2f} {r.stdev:6.2f} "
            f"{theory} {eff} {loss}  {_verdict(r)}"
        )
    return out


def _console_rows(rows: list[CaseRecord]) -> list[str]:
    head = (
        f"{'console throughput (kbit/s)':40s} {'median':>9s} {'min':>9s} {'max':>9s} {'B/s':>9s} {'nominal':>8s} "
        f"{'eff %':>6s} {'bad B':>6s} {'miss B':>7s}  verdict"
    )
    out = [head, "-" * len(head)]
    for r in rows:
        m = r.measured
        nominal = f"{r.theory:8.1f}" if r.theory else f"{'none':>8s}"
        eff = f"{r.efficiency_pct:6.1f}" if r.efficiency_pct is not None else f"{'-':>6s}"
        out.append(
            f"{r.scenario + '/' + r.case:40s} {r.median:9.1f} {r.minimum:9.1f} {r.maximum:9.1f} "
            f"{m.get('bytes_per_s', 0.0):9.0f} {nominal} {eff} {int(m.get('corrupted', 0)):6d} "
            f"{int(m.get('missing', 0)):7d}  {_verdict(r)}"
        )
    return out


def _latency_rows(rows: list[CaseRecord]) -> list[str]:
    head = f"{'latency (ms)':40s} {'median':>9s} {'min':>9s} {'max':>9s} {'sd':>6s} {'p99':>8s} {'loss %':>7s}  verdict"
    out = [head, "-" * len(head)]
    for r in rows:
        p99 = r.measured.get("p99_ms")
        p99_text = f"{p99:8.3f}" if p99 is not None else f"{'-':>8s}"
        loss = f"{r.loss_pct:7.3f}" if r.loss_pct is not None else f"{'-':>7s}"
        out.append(
            f"{r.scenario + '/' + r.case:40s} {r.median:9.3f} {r.minimum:9.3f} {r.maximum:9.3f} {r.stdev:6.3f} "
            f"{p99_text} {loss}  {_verdict(r)}"
        )
    return out


def _stream_rows(rows: list[CaseRecord]) -> list[str]:
    head = f"{'streams (packets)':40s} {'sent':>9s} {'lost':>9s} {'loss %':>8s} {'late':>6s} {'ooo':>6s}  verdict"
    out = [head, "-" * len(head)]
    for r in rows:
        m = r.measured
        out.append(
            f"{r.scenario + '/' + r.case:40s} {int(m.get('sent', 0)):9d} {int(m.get('lost', 0)):9d} "
            f"{r.loss_pct or 0.0:8.4f} {int(m.get('late', 0)):6d} {int(m.get('outoforder', 0)):6d}  {_verdict(r)}"
        )
    return out
