"""Every number of a case as an OpenMetrics / Prometheus text sample, through pytest-embedded's
`log_metric` (its `--metric-path` file, `<results-dir>/metrics.prom` by default): one line per
record and metric, `hil_<metric>{dut=...,scenario=...,case=...,profile=...,unit=...} value`, and
the run's identity once, `hil_run_info{run=...,dut=...,profile=...} 1`; a lab's Prometheus reads
the file through node_exporter's textfile collector and Grafana charts it (docs/report.md#the-
metrics-file). No label changes from run to run but the info metric's, so a case is one series."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from hil.results.recorder import CaseRecord, metric_unit

PREFIX = "hil_"
_NAME = re.compile(r"[^a-zA-Z0-9_]")


def metric_name(metric: str) -> str:
    """A record's metric as a Prometheus metric name: `hil_` and the name, other characters as `_`."""
    return PREFIX + _NAME.sub("_", metric)


def label(value: object) -> str:
    """A label value as the text format escapes it: backslash, double quote and newline."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def log_run(log_metric: Callable[..., None], run: str, dut: str, profile: str) -> None:
    log_metric(f"{PREFIX}run_info", 1, run=label(run), dut=label(dut), profile=label(profile))


def log_records(log_metric: Callable[..., None], records: Iterable[CaseRecord], profile: str) -> int:
    """Logs every finite metric of `records` (a case's); returns how many samples it logged."""
    n = 0
    for rec in records:
        labels = {"dut": rec.dut, "scenario": rec.scenario, "case": rec.case, "profile": profile}
        for metric, value in rec.metrics().items():
            if not math.isfinite(value):
                continue
            unit = metric_unit(metric) or "1"
            log_metric(metric_name(metric), repr(float(value)),
                       **{k: label(v) for k, v in {**labels, "unit": unit}.items()})  # fmt: skip
            n += 1
    return n
