"""Runs one point of a sweep family (hil.scenarios.families.sweeps) as its own case: the
point's traffic measured and recorded, the family's own verification, the threshold check;
the last point of a group also attaches the group's table and chart, made from the points of the
group measured in this run."""

from __future__ import annotations

from typing import TYPE_CHECKING

import allure

from hil.checks import BenchFault, baseline_note, criteria, headline
from hil.report.background_charts import attach_chart
from hil.results.recorder import CaseRecord
from hil.scenarios.charts import dut_side_chart, has_dut_side, has_rfc6349, limit_line, rfc6349_chart, sweep_chart
from hil.scenarios.families.sweeps import PointEnv, SweepPoint
from hil.scenarios.rfc6349 import rfc6349_table
from hil.scenarios.sweep import Point, attach_text, check, confirm_miss, measure, table

if TYPE_CHECKING:
    from hil.session import HilContext


def run_point(hil: HilContext, point: SweepPoint) -> CaseRecord:
    fam, group = point.family, point.group
    limits = hil.thresholds.limits(point.scenario, point.case)  # no threshold: an error before any traffic
    steps = {d: hil.rate_step(d) for d in ("dut_tx", "dut_rx")}  # the senders' rate steps (whole Mbit/s)
    traffic = fam.traffic(group, point.value, PointEnv(hil.link_mbit, hil.duration_s, steps))
    allure.dynamic.feature(fam.name)
    allure.dynamic.story(f"{point.scenario} {point.label}")
    allure.dynamic.title(f"{fam.name}, {point.id}")
    for name, value in traffic.params.items():
        allure.dynamic.parameter(name, value)
    x = fam.axis.x(point.value) if fam.axis is not None else 0.0
    measured = Point(point.case, traffic.spec, traffic.theory_mbps, x=x)
    rec = measure(hil, point.scenario, measured)
    allure.dynamic.title(f"{point.id}: {headline(rec)}; {criteria(rec.metrics(), limits)}{baseline_note(rec)}")
    if point.last_of_group:
        _attach_group(hil, point)
    problem = fam.verify(rec, point.value) if fam.verify is not None else None
    try:
        check(hil, point.scenario, [rec])
    except AssertionError as exc:
        if problem is None:  # the DUT missed a threshold: the verdict (the majority of trials on a DUT on the bench PC)
            confirm_miss(hil, point.scenario, exc, lambda: measure(hil, point.scenario, measured))
            return rec
        if isinstance(problem, BenchFault) and not isinstance(exc, BenchFault):
            raise  # the DUT missed a threshold: that is the verdict
        if isinstance(problem, BenchFault):  # both the bench's: one bench fault naming both
            raise BenchFault(f"{_what(problem)}; {_what(exc)}") from None
        raise AssertionError(f"{problem}; {exc}") from None
    if problem is not None:
        raise problem
    return rec


def _what(fault: AssertionError) -> str:
    return str(fault).removeprefix("BENCH FAULT: ")


def group_records(hil: HilContext, point: SweepPoint) -> list[CaseRecord]:
    """The group's points measured in this run, the latest of each case, in measuring order."""
    return hil.recorder.latest(point.scenario, point.group_prefix)


def _attach_group(hil: HilContext, point: SweepPoint) -> None:
    fam, axis = point.family, point.family.axis
    records = group_records(hil, point)
    if axis is None or not records:
        return
    name = f"{point.scenario} {point.direction}"
    attach_text(f"{name}: the group's points", (fam.table or (lambda rs: table(rs, axis.label)))(records))
    xs = [float(r.extra["x"]) for r in records]  # type: ignore[arg-type]
    # the limits from the profile: rec.threshold is filled by check(), after this
    bounds = [(x, hil.thresholds.limits(point.scenario, r.case).bounds()) for x, r in zip(xs, records, strict=True)]
    rates = [(x, r.extra.get("offered_mbps")) for x, r in zip(xs, records, strict=True)]  # UDP: the offered rate
    offered = [(x, float(v)) for x, v in rates if isinstance(v, int | float)]
    attach_chart(
        f"{name}: goodput vs {axis.label}",
        sweep_chart,
        f"{fam.name}, {point.label}: goodput vs {axis.label}",
        axis.label,
        {point.direction: [(x, r.median) for x, r in zip(xs, records, strict=True)]},
        theory=[(x, r.theory) for x, r in zip(xs, records, strict=True) if r.theory],
        logx=axis.logx,
        threshold=limit_line(bounds, "min", "mbps"),
        offered=offered or None,
        min_efficiency=limit_line(bounds, "min", "efficiency_pct"),
    )
    side = [(x, r.measured) for x, r in zip(xs, records, strict=True)]
    if has_dut_side(side):
        attach_chart(f"{name}: the DUT's CPU, segments and pools vs {axis.label}", dut_side_chart,
                     f"{fam.name}, {point.label}: the DUT's side", axis.label, side, logx=axis.logx)  # fmt: skip
    figures = [(x, r.median, r.measured) for x, r in zip(xs, records, strict=True)]
    if has_rfc6349(figures):
        attach_chart(f"{name}: RFC 6349 figures with the goodput vs {axis.label}", rfc6349_chart,
                     f"{fam.name}, {point.label}: RFC 6349 (TTR, TCP efficiency, buffer delay)", axis.label, figures,
                     logx=axis.logx)  # fmt: skip
        attach_text(f"{name}: RFC 6349 figures", rfc6349_table(records, axis.label))
