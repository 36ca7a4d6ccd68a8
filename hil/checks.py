"""Threshold checks: every number is recorded first, then checked here; a failure message shows
the measured, the threshold and the theoretical value."""

from __future__ import annotations

from collections.abc import Mapping

from hil.config.thresholds import Limits, Trend
from hil.results.recorder import CaseRecord, metric_unit

BELOW_THRESHOLD = "BELOW THRESHOLD"
REGRESSION = "REGRESSION"


class Regression(AssertionError):
    """Within its fixed thresholds, but worse than the baseline run by more than the scenario's
    tolerance (hil.results.baseline): a DUT failure."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{REGRESSION} against the baseline: {what}")


class BenchFault(AssertionError):
    """The bench, not the DUT, set the numbers of a case and the DUT missed nothing on its own,
    proven by the evidence of a rule of hil.bench_faults (there and only there: a sender of the
    bench that fell short of its rate with all it sent arrived, a tool that failed while the DUT
    still answered, ...). Reported as a bench fault (exit 75); self-test runs may xfail it
    (--bench-fault xfail)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"BENCH FAULT: {what}")


def generator_shortfall(cases: list[str]) -> str:
    what = "; ".join(cases)
    return f"a sender of the bench fell short of what the limits ask to arrive: {what}: those rates are not the DUT's"


def _num(value: float, metric: str) -> str:
    unit = metric_unit(metric)
    if unit == "Mbit/s":
        return f"{value:.2f} Mbit/s"
    if unit == "kbit/s":
        return f"{value:.1f} kbit/s"
    if unit == "B/s":
        return f"{value:.0f} B/s"
    if unit == "%":
        return (
            f"{value:.3f} %"
            if metric == "loss_pct"
            else f"{value:.2f} %"
            if metric == "tcp_efficiency_pct"
            else f"{value:.1f} %"
        )
    if unit == "ms":
        return f"{value:.3f} ms"
    return f"{value:g}"


def violations(
    metrics: Mapping[str, float],
    limits: Limits,
    theory_mbps: float | None = None,
    unmeasurable: Mapping[str, str] | None = None,
    withheld: Mapping[str, str] | None = None,
) -> list[str]:
    """Every limit the metrics miss, one message each naming the measured value, the threshold
    and (for throughput) the theoretical value. Generic over metric names: `min_<metric>` and
    `max_<metric>` of the threshold profile against the case's metric of that name. A metric the
    case lacks is a miss, unless `unmeasurable` says why the bench cannot give it (the case's
    title shows it "not measured"); `withheld` names the ones the DUT's path kept from the
    measurement (no probe answered), a miss with that reason."""
    out = []
    median = metrics.get("mbps")
    theory = f"theoretical {theory_mbps:.2f} Mbit/s" if theory_mbps else "no theoretical value"
    for bound, metric, limit in limits.bounds():
        value = metrics.get(metric)
        if value is None:
            if metric in (withheld or {}):
                out.append(f"{metric} not measured against its limit: {(withheld or {})[metric]}")
            elif metric not in (unmeasurable or {}):
                out.append(f"a limit on {metric} is set but the case measures no {metric}")
            continue
        if (bound == "min" and value >= limit) or (bound == "max" and value <= limit):
            continue
        rel = "<" if bound == "min" else ">"
        if metric == "mbps":
            eff = f", measured {100.0 * value / theory_mbps:.1f} % of it" if theory_mbps else ""
            out.append(f"median {_num(value, metric)} {rel} threshold {_num(limit, metric)} ({theory}{eff})")
        elif metric == "efficiency_pct":
            word = "threshold" if bound == "min" else "upper limit"
            what = "" if bound == "min" else ": more than the construction allows"
            of = f"median {median or 0.0:.2f} Mbit/s of {theory}{what}"
            out.append(f"efficiency {value:.1f} % {rel} {word} {limit:.1f} % ({of})")
        elif metric == "loss_pct" and median is not None:
            out.append(f"loss {value:.3f} % {rel} threshold {limit:.3f} % (median {median:.2f} Mbit/s)")
        elif metric == "latency_ms":
            out.append(f"latency {value:.3f} ms {rel} threshold {limit:.3f} ms")
        else:
            out.append(f"{metric} {_num(value, metric)} {rel} threshold {_num(limit, metric)}")
    return out


def trend_violations(points: list[tuple[str, float]], trend: Trend) -> list[str]:
    """Checks a ladder's medians (label, Mbit/s), in ladder order, against its trend: the best later
    step must gain `min_gain_pct` over the first; no step may fall `max_drop_pct` below the best
    before it. A ladder of fewer than two steps has no trend and gives a violation saying so."""
    if len(points) < 2:
        return [f"a trend needs at least two ladder steps, got {len(points)}"]
    out = []
    (first_label, first), rest = points[0], points[1:]
    best_label, best = max(rest, key=lambda p: p[1])
    gain = 100.0 * (best - first) / first if first > 0 else float("inf")
    if gain < trend.min_gain_pct:
        out.append(
            f"best later step {best_label} {best:.2f} Mbit/s gains {gain:.1f} % over {first_label} "
            f"{first:.2f} Mbit/s < threshold {trend.min_gain_pct:.1f} %"
        )
    for i in range(1, len(points)):
        prev_label, prev = max(points[:i], key=lambda p: p[1])
        label, value = points[i]
        drop = 100.0 * (prev - value) / prev if prev > 0 else 0.0
        if drop > trend.max_drop_pct:
            out.append(
                f"{label} {value:.2f} Mbit/s falls {drop:.1f} % below {prev_label} {prev:.2f} Mbit/s "
                f"> threshold {trend.max_drop_pct:.1f} %"
            )
    return out


CRITERION_NAMES = {"mbps": "median", "kbps": "median", "efficiency_pct": "efficiency", "loss_pct": "loss",
                   "tcp_efficiency_pct": "TCP efficiency", "ttr": "TTR", "buffer_delay_pct": "buffer delay",
                   "beyond_bound_ms": "p99 beyond the queues' bound", "queue_delay_ms": "queueing delay"}  # fmt: skip


def criteria(metrics: Mapping[str, float], limits: Limits) -> str:
    """Each limit with the measured value against it, for a case's title: "efficiency 99.9 % >= 98.0 %,
    loss 0.000 % <= 0.500 %", a missed one as it is: "efficiency 90.7 % < 95.0 % MISSED"; "no
    criterion" when the profile sets none."""
    if limits.no_criterion is not None:
        return f"no criterion ({limits.no_criterion})"
    parts = []
    for bound, metric, limit in limits.bounds():
        value = metrics.get(metric)
        name = CRITERION_NAMES.get(metric, metric)
        shown = _num(value, metric) if value is not None else "not measured"
        missed = value is not None and (value < limit if bound == "min" else value > limit)
        op = ("<" if bound == "min" else ">") if missed else (">=" if bound == "min" else "<=")
        parts.append(f"{name} {shown} {op} {_num(limit, metric)}" + (" MISSED" if missed else ""))
    return ", ".join(parts)


def headline(rec: CaseRecord) -> str:
    """A case's own number in words: "median 94.61 Mbit/s = 99.7 % of 94.93", "median 0.210 ms,
    p99 0.402 ms", "0 of 12800 lost"."""
    if rec.unit == "Mbit/s":
        eff = (
            f" = {rec.efficiency_pct:.1f} % of {rec.theory:.2f}"
            if rec.efficiency_pct is not None and rec.theory
            else ""
        )
        m = rec.measured  # a TCP record's RFC 6349 figures, where measured
        rfc = [f"TTR {m['ttr']:.3f}"] if "ttr" in m else []
        rfc += [f"TCP efficiency {m['tcp_efficiency_pct']:.2f} %"] if "tcp_efficiency_pct" in m else []
        rfc += [f"buffer delay {m['buffer_delay_pct']:.0f} %"] if "buffer_delay_pct" in m else []
        return f"median {rec.median:.2f} Mbit/s{eff}" + (f" ({', '.join(rfc)})" if rfc else "")
    if rec.unit == "kbit/s":  # a console: its nominal rate when it has one
        per_s = rec.measured.get("bytes_per_s")
        rate = f" ({per_s:.0f} B/s)" if per_s is not None else ""
        if rec.efficiency_pct is not None and rec.theory:
            return f"median {rec.median:.1f} kbit/s{rate} = {rec.efficiency_pct:.1f} % of nominal {rec.theory:.1f}"
        return f"median {rec.median:.1f} kbit/s{rate}, no nominal rate"
    if rec.unit == "ms":
        p99 = rec.measured.get("p99_ms")
        return f"median {rec.median:.3f} ms" + (f", p99 {p99:.3f} ms" if p99 is not None else "")
    sent, lost = rec.measured.get("sent"), rec.measured.get("lost")
    if sent is not None and lost is not None:
        return f"{int(lost)} of {int(sent)} lost ({rec.loss_pct or 0.0:.3f} %)"
    return f"{rec.median:g} {rec.unit}"


def baseline_note(rec: CaseRecord) -> str:
    """The case against the baseline run for its title: "; baseline 94.90 Mbit/s, regression below
    92.05 Mbit/s" ("" without a baseline for it)."""
    parts = []
    for metric, c in rec.baseline.items():
        base, limit = float(c["baseline"]), float(c["limit"])  # type: ignore[arg-type]
        word = "below" if c.get("better") == "higher" else "above"
        flag = " REGRESSED" if c.get("regressed") else ""
        parts.append(f"baseline {_num(base, metric)}, regression {word} {_num(limit, metric)}{flag}")
    return f"; {'; '.join(parts)}" if parts else ""


def case_title(base: str, checked: list[tuple[CaseRecord, Limits]]) -> str:
    """A case's title with every number against its criterion: up to three records in full; a
    case of more records (stress streams) shows its total (record `all`, else the first) in full
    and says which of the others miss their criteria."""

    def full(rec: CaseRecord, limits: Limits, named: bool) -> str:
        name = f"{rec.case} " if named else ""
        return f"{name}{headline(rec)}; {criteria(rec.metrics(), limits)}{baseline_note(rec)}"

    if len(checked) == 1:
        return f"{base}: {full(*checked[0], named=False)}"
    if len(checked) <= 3:
        return f"{base}: " + " | ".join(full(rec, limits, named=True) for rec, limits in checked)
    main = next((c for c in checked if c[0].case == "all"), checked[0])
    others = [c for c in checked if c is not main]
    missed = [f"{rec.case} ({'; '.join(v)})" for rec, limits in others if (v := violations(rec.metrics(), limits))]
    rest = (
        f"{len(missed)} of {len(others)} others miss their criteria: {', '.join(missed)}"
        if missed
        else f"each of the {len(others)} others within its criteria"
    )
    return f"{base}: {full(*main, named=True)} | {rest}"
