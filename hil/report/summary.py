"""The run's summary: one row per case and metric with the measured value (median and spread
over the repetitions), the theoretical value and efficiency, the criterion, the margin to it,
the verdict, and the change since the run it is compared with; rendered as CSV, as a static
HTML table (the report's attachment) and as a sortable HTML page."""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Sequence
from dataclasses import dataclass, fields

from hil.results.findings import Finding
from hil.results.recorder import PRIMARY_METRIC, CaseRecord, metric_better, metric_unit

METRIC_NAMES = {
    "mbps": "median goodput",
    "kbps": "median throughput",
    "bytes_per_s": "bytes per second",
    "corrupted": "corrupted bytes",
    "missing": "missing bytes",
    "median_ms": "median",
    "latency_ms": "latency (p99 or average)",
    "efficiency_pct": "efficiency (of theory)",
    "loss_pct": "loss",
    "jitter_ms": "jitter",
    "late": "late packets",
    "outoforder": "out-of-order packets",
    # the capacity search (RFC 9971): the case's mbps is the PDR's relevant lower bound
    "ndr_mbps": "NDR (relevant lower bound)",
    "ndr_upper_mbps": "NDR relevant upper bound",
    "ndr_ct_mbps": "NDR conditional throughput",
    "pdr_upper_mbps": "PDR relevant upper bound",
    "pdr_ct_mbps": "PDR conditional throughput",
}
FAILED = "FAIL"
REGRESSED = "REGRESSION"  # within the thresholds, worse than the baseline run by more than the tolerance
PASSED = "pass"
BENCH_FAULTS = ("generator-limited", "tester-limited")  # the verdicts a rule of hil.bench_faults gives a record


@dataclass
class SummaryRow:
    case: str  # scenario/case
    metric: str
    unit: str
    value: float
    minimum: float | None  # spread over the repetitions (the case's own metric)
    maximum: float | None
    stdev: float | None
    repetitions: int
    theory: float | None
    efficiency_pct: float | None
    criterion: str  # ">= 93", "<= 0.5", "" (none on this metric)
    margin: float | None  # in the metric's unit; positive inside the limit
    margin_pct: float | None  # of the limit
    # pass | FAIL | REGRESSION | generator-limited | info | no criterion | not checked
    verdict: str
    baseline: float | None = None  # the --baseline run's median of this metric
    baseline_limit: float | None = None  # the worst value the regression gate lets pass
    previous: float | None = None
    change: float | None = None
    change_pct: float | None = None
    test: str = ""

    @property
    def key(self) -> str:
        """The metric's key across runs (and in Allure's metrics): `baseline/tcp-dut_tx/mbps`."""
        return f"{self.case}/{self.metric}"


def _criterion_rows(rec: CaseRecord) -> dict[str, tuple[str, float]]:
    """The case's limits by metric: {"mbps": ("min", 93.0), ...} (from the record's threshold)."""
    out: dict[str, tuple[str, float]] = {}
    for key, limit in rec.threshold.items():
        bound, _, metric = key.partition("_")
        out[metric] = (bound, float(limit))
    return out


def summary_rows(records: list[CaseRecord], previous: dict[str, float] | None = None) -> list[SummaryRow]:
    """One row per case and metric of the records (the latest of each case: Recorder.latest):
    the case's own number, then each metric it has a limit on."""
    out: list[SummaryRow] = []
    for rec in records:
        metrics = rec.metrics()
        limits = _criterion_rows(rec)
        primary = PRIMARY_METRIC.get(rec.unit, "mbps")
        case = f"{rec.scenario}/{rec.case}"
        for metric in dict.fromkeys([primary, *limits, *rec.baseline]):
            value = metrics.get(metric)
            if value is None:
                continue
            own = metric == primary
            row = SummaryRow(
                case=case, metric=metric, unit=metric_unit(metric),
                value=value, minimum=rec.minimum if own else None, maximum=rec.maximum if own else None,
                stdev=rec.stdev if own else None, repetitions=len(rec.values),
                theory=rec.theory if metric == primary and metric in ("mbps", "kbps") else None,
                efficiency_pct=rec.efficiency_pct if metric == primary and metric in ("mbps", "kbps") else None,
                criterion="", margin=None, margin_pct=None, verdict="", test=rec.test or "",
            )  # fmt: skip
            _judge(row, rec, limits.get(metric))
            compared = rec.baseline.get(metric)
            if compared is not None:
                row.baseline, row.baseline_limit = float(compared["baseline"]), float(compared["limit"])  # type: ignore[arg-type]
                if compared.get("regressed") and row.verdict in (PASSED, "info"):
                    row.verdict = REGRESSED
            if previous is not None and row.key in previous:
                row.previous = previous[row.key]
                row.change = row.value - row.previous
                row.change_pct = 100.0 * row.change / row.previous if row.previous else None
            out.append(row)
    return out


def _judge(row: SummaryRow, rec: CaseRecord, limit: tuple[str, float] | None) -> None:
    if limit is None:
        checked = bool(rec.threshold) or rec.verdict != "recorded"
        row.verdict = "info" if checked else "not checked"
        if rec.extra.get("no_criterion"):
            row.verdict, row.criterion = "no criterion", f"none: {rec.extra['no_criterion']}"
        return
    bound, value = limit
    row.criterion = f"{'>=' if bound == 'min' else '<='} {value:g}"
    row.margin = row.value - value if bound == "min" else value - row.value
    row.margin_pct = 100.0 * row.margin / value if value else None
    if rec.verdict in BENCH_FAULTS:
        row.verdict = rec.verdict
    else:
        row.verdict = PASSED if row.margin >= 0 else FAILED


def counts(rows: list[SummaryRow]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r.verdict] = out.get(r.verdict, 0) + 1
    return out


def headline(rows: list[SummaryRow], compared_with: str | None) -> str:
    """One line for the summary's title: how many cases and criteria, and how they came out."""
    n_cases = len({r.case for r in rows})
    c = counts(rows)
    criteria = sum(v for k, v in c.items() if k in (PASSED, FAILED, REGRESSED, *BENCH_FAULTS))
    parts = [f"{c.get(PASSED, 0)} met", f"{c.get(FAILED, 0)} missed"]
    if any(r.baseline is not None for r in rows):
        parts.append(f"{c.get(REGRESSED, 0)} regressed against the baseline")
    parts += [f"{c[k]} {k} (bench fault)" for k in BENCH_FAULTS if c.get(k)]
    if c.get("no criterion"):
        parts.append(f"{c['no criterion']} without criterion")
    if c.get("not checked"):
        parts.append(f"{c['not checked']} not checked")
    since = f"; change vs run {compared_with}" if compared_with else "; no earlier run to compare with"
    return f"{n_cases} cases, {criteria} criteria: {', '.join(parts)}{since}"


def _fmt(value: float | None, unit: str = "", signed: bool = False) -> str:
    if value is None:
        return ""
    digits = 3 if unit in ("ms", "%") and abs(value) < 10 else 2
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text and not signed else text


def _spread(r: SummaryRow) -> str:
    if r.minimum is None or r.maximum is None:
        return ""
    if r.repetitions < 2:
        return "1 run"
    return f"{_fmt(r.minimum, r.unit)}-{_fmt(r.maximum, r.unit)} (n={r.repetitions})"


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:+.1f} %"


# (key, heading, left-aligned)
COLUMNS = [
    ("case", "case", True), ("metric", "metric", True), ("measured", "median", False),
    ("spread", "min-max (n)", False), ("theory", "of theory", False), ("criterion", "criterion", False),
    ("margin", "margin", False), ("verdict", "verdict", True), ("baseline", "baseline", False),
    ("baseline_limit", "regression limit", False), ("previous", "previous", False), ("change", "change", False),
]  # fmt: skip
BASELINE_COLUMNS = ("baseline", "baseline_limit")


def _cells(r: SummaryRow) -> dict[str, tuple[str, str]]:
    """Each column's text and its tooltip (the absolute figures behind a percentage)."""
    unit = f" {r.unit}" if r.unit and r.unit != "%" else (" %" if r.unit == "%" else "")
    theory = f"{r.efficiency_pct:.1f} % of {_fmt(r.theory, r.unit)}" if r.efficiency_pct is not None else ""
    margin = _pct(r.margin_pct) if r.margin_pct is not None else _fmt(r.margin, r.unit, signed=True)
    if r.change is not None:
        change = _pct(r.change_pct) if r.change_pct is not None else _fmt(r.change, r.unit, signed=True)
    else:
        change = "new" if r.previous is None else ""
    return {
        "case": (r.case, r.test), "metric": (METRIC_NAMES.get(r.metric, r.metric), r.metric),
        "measured": (f"{_fmt(r.value, r.unit)}{unit}", ""), "spread": (_spread(r), f"sd {_fmt(r.stdev, r.unit)}"),
        "theory": (theory, ""), "criterion": (r.criterion, ""),
        "margin": (margin, f"{_fmt(r.margin, r.unit, signed=True)}{unit}" if r.margin is not None else ""),
        "verdict": (r.verdict, ""), "previous": (_fmt(r.previous, r.unit), ""),
        "baseline": (_fmt(r.baseline, r.unit), "the --baseline run's median"),
        "baseline_limit": (_baseline_limit(r), "worse than this is a regression (baseline less its tolerance)"),
        "change": (change, f"{_fmt(r.change, r.unit, signed=True)}{unit}" if r.change is not None else ""),
    }  # fmt: skip


def _baseline_limit(r: SummaryRow) -> str:
    if r.baseline_limit is None:
        return ""
    return f"{'>=' if metric_better(r.metric) == 'higher' else '<='} {_fmt(r.baseline_limit, r.unit)}"


def to_csv(rows: list[SummaryRow]) -> str:
    """Every field of every row, numbers unrounded, for a spreadsheet."""
    buf = io.StringIO()
    names = [f.name for f in fields(SummaryRow)]
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["key", *names])
    for r in rows:
        writer.writerow([r.key, *("" if getattr(r, n) is None else getattr(r, n) for n in names)])
    return buf.getvalue()


_STYLE = """
body { font: 12px/1.35 system-ui, sans-serif; margin: 8px; color: #222; }
h1 { font-size: 16px; margin: 0 0 4px; } p { margin: 0 0 10px; color: #444; }
h2 { font-size: 14px; margin: 4px 0 2px; } ul.findings { margin: 0 0 10px; padding-left: 18px; }
ul.findings li { margin: 3px 0; } ul.findings small { color: #555; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 5px; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; position: sticky; top: 0; cursor: pointer; user-select: none; }
td.t, th.t { text-align: left; }
tr.FAIL td, tr.REGRESSION td { background: #fde8e8; }
tr.FAIL td.v, tr.REGRESSION td.v { color: #b00; font-weight: bold; }
tr.pass td.v { color: #17702f; } tr.bench td.v { color: #a15c00; font-weight: bold; }
tr.info td { color: #555; }
tr.case td { background: #f7f7f7; border-top: 2px solid #bbb; padding-top: 4px; }
tr.case span { color: #555; } tr.case.FAIL td { background: #fde8e8; } tr.case.bench td { background: #fff3df; }
td.up { color: #17702f; } td.down { color: #b00; }
"""

_SORT_SCRIPT = """
document.querySelectorAll('th').forEach((th, col) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0], rows = [...body.rows];
  const dir = th.dataset.dir === 'asc' ? -1 : 1; th.dataset.dir = dir === 1 ? 'asc' : 'desc';
  const key = r => { const t = r.cells[col].dataset.v ?? r.cells[col].textContent;
                     const n = parseFloat(t); return isNaN(n) ? t : n; };
  rows.sort((a, b) => { const x = key(a), y = key(b);
    return (typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1)) * dir; });
  rows.forEach(r => body.appendChild(r));
}));
"""


NOTABLE_CHANGE_PCT = 1.0  # a change below this share of the previous value is not coloured (run-to-run noise)


def _better(r: SummaryRow) -> str:
    """'up' when the change is a notable improvement, 'down' when it is a notable regression."""
    if r.change is None or r.change == 0:
        return ""
    if r.change_pct is not None and abs(r.change_pct) < NOTABLE_CHANGE_PCT:
        return ""
    return "up" if (r.change > 0) == (metric_better(r.metric) == "higher") else "down"


def _row(r: SummaryRow, columns: list[tuple[str, str, bool]]) -> str:
    cells = _cells(r)
    tds = []
    for k, _, left in columns:
        classes = ["t"] if left else []
        classes += ["v"] if k == "verdict" else []
        classes += [_better(r)] if k == "change" and _better(r) else []
        attrs = f' class="{" ".join(classes)}"' if classes else ""
        margin = r.margin_pct if r.margin_pct is not None else r.margin
        sort_value = {
            "margin": margin, "change": r.change_pct, "measured": r.value,
            "previous": r.previous, "baseline": r.baseline,
        }.get(k)  # fmt: skip
        if sort_value is not None:
            attrs += f' data-v="{sort_value:.6g}"'
        text, tip = cells[k]
        if tip:
            attrs += f' title="{html.escape(tip)}"'
        tds.append(f"<td{attrs}>{html.escape(text)}</td>")
    verdict_class = {FAILED: "FAIL", REGRESSED: "REGRESSION", PASSED: "pass", "info": "info"}
    cls = "bench" if r.verdict in BENCH_FAULTS else verdict_class.get(r.verdict, "")
    return f'<tr class="{cls}">{"".join(tds)}</tr>'


def _case_head(rows: list[SummaryRow], width: int) -> str:
    """A case's heading row in the narrow table: its name, spread over the runs and theory."""
    own = rows[0]
    spread = _spread(own)
    spread = f"min-max {spread}" if spread and own.repetitions > 1 else spread
    facts = [x for x in (spread, _cells(own)["theory"][0]) if x]
    verdicts = {r.verdict for r in rows}
    cls = "FAIL" if verdicts & {FAILED, REGRESSED} else "bench" if verdicts & set(BENCH_FAULTS) else ""
    text = f"<b>{html.escape(own.case)}</b>" + (f" <span>{html.escape('; '.join(facts))}</span>" if facts else "")
    return f'<tr class="case {cls}"><td class="t" colspan="{width}">{text}</td></tr>'


_BASELINE_NOTE = (
    " Baseline: the known-good run's median (--baseline); regression limit: the baseline less the "
    "scenario's tolerance (a % floor plus k standard deviations of both runs); worse is a REGRESSION."
)


def findings_html(found: Sequence[Finding]) -> str:
    """The run's findings (hil.results.findings) as a block above the table: each statement with
    the numbers it comes from."""
    if not found:
        return ""
    items = "".join(
        f"<li><b>{html.escape(f.topic)}</b>: {html.escape(f.statement)}<br><small>from: {html.escape(f.numbers)}"
        "</small></li>"
        for f in found
    )
    return f'<h2>Findings</h2><ul class="findings">{items}</ul>'


def to_html(rows: list[SummaryRow], title: str, sortable: bool, found: Sequence[Finding] = ()) -> str:
    """The table as an HTML page. `sortable`: one flat table, every column, sorted by a clicked
    column (a page of its own). Otherwise the narrow form the report shows inline (without
    scripts, in a narrow frame): a heading row per case with its spread and theory, then one row
    per metric with the criterion, margin, verdict and change."""
    columns = COLUMNS if sortable else [c for c in COLUMNS if c[0] not in ("case", "spread", "theory")]
    if not any(r.baseline is not None for r in rows):  # no --baseline: no empty columns
        columns = [c for c in columns if c[0] not in BASELINE_COLUMNS]
    head = "".join(f'<th class="{"t" if left else ""}">{html.escape(n)}</th>' for _, n, left in columns)
    body = []
    if sortable:
        body = [_row(r, columns) for r in rows]
    else:
        by_case: dict[str, list[SummaryRow]] = {}
        for r in rows:
            by_case.setdefault(r.case, []).append(r)
        for case_rows in by_case.values():
            body += [_case_head(case_rows, len(columns)), *(_row(r, columns) for r in case_rows)]
    script = f"<script>{_SORT_SCRIPT}</script>" if sortable else ""
    note = "Click a column to sort. " if sortable else ""
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        f"<title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>{findings_html(found)}"
        f"<p>{note}Median over the runs; margin: distance to the criterion in % of the limit, positive "
        "inside it; change: this run against the run compared with (hover a cell for the absolute "
        f"figures).{_BASELINE_NOTE if any(r.baseline is not None for r in rows) else ''} Every field "
        "unrounded: summary.csv; sortable: summary.html.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{script}</body></html>"
    )
