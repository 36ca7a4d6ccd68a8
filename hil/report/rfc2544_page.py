"""The report's RFC 2544 page: the standard's tables over every frame size and direction a run
measured (hil/scenarios/families/rfc2544.py's records), as `rfc2544.html` beside the results (the
report carries a copy) and as an Allure result of its own that shows the same tables inline.

Per direction: throughput (RFC 9971's NDR, RFC 2544's throughput) in frames/s and Mbit/s against
the line rate and the tester's own ceiling, with the NDR and PDR searches' bounds; latency at 10,
50, 90 and 100 % of it; the frame loss rate curve; back-to-back frames and the buffer they imply;
system recovery and reset time (RFC 6201); the spacing of the offered frames at the DUT's input."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from hil.report.allure_results import write_page_result
from hil.results.recorder import CaseRecord

SCENARIO = "rfc2544"
PAGE = "rfc2544.html"
FEATURE = "RFC 2544 benchmark"

_STYLE = """
body { font: 12px/1.35 system-ui, sans-serif; margin: 8px; color: #222; }
h1 { font-size: 16px; margin: 0 0 4px; } h2 { font-size: 14px; margin: 14px 0 2px; }
h3 { font-size: 12.5px; margin: 10px 0 2px; } p { margin: 0 0 6px; color: #444; }
table { border-collapse: collapse; margin-bottom: 4px; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; } td.t, th.t { text-align: left; }
td.t { white-space: normal; max-width: 300px; }
td.fail { color: #b00; font-weight: bold; } td.pass { color: #17702f; } td.note { color: #a15c00; }
p.small { font-size: 11px; color: #555; }
"""


def _e(x: object) -> str:
    return html.escape(str(x))


def _status(text: object) -> str:
    """A status as its first clause, the whole of it on hover (the tables stay narrow in the report)."""
    full = str(text if text is not None else "-")
    head = full.split(":")[0]
    return _e(head) if head == full else f'<span title="{_e(full)}">{_e(head)}</span>'


def _num(x: object, fmt: str = ",.0f") -> str:
    return format(x, fmt) if isinstance(x, int | float) and not isinstance(x, bool) else "-"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], text: Sequence[int] = (0,)) -> str:
    """A table of pre-formatted (escaped) cells; the columns in `text` left-aligned and wrapped."""
    th = "".join(f'<th class="{"t" if i in text else ""}">{_e(h)}</th>' for i, h in enumerate(head))
    body = "".join(
        "<tr>" + "".join(c if c.startswith("<td") else f'<td class="{"t" if i in text else ""}">{c}</td>'
                         for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )  # fmt: skip
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _frame(r: CaseRecord) -> int:
    return int(r.extra["frame_bytes"])  # type: ignore[call-overload]


def _bounds(res: dict[str, object]) -> str:
    lo, up = res.get("lower_mbps"), res.get("upper_mbps")
    if lo is None and up is None:
        return _e(res.get("status", "-"))
    if up is None:
        return f"&ge; {_num(lo, '.3f')}"  # loss-free at the search's max load
    if lo is None:
        return f"&lt; {_num(up, '.3f')}"
    return f"{_num(lo, '.3f')} - {_num(up, '.3f')}"


def _status_cell(r: CaseRecord) -> str:
    verdict = r.verdict
    cls = "pass" if verdict == "passed" else "fail" if verdict in ("below threshold", "regression") else "note"
    notes = []
    if r.extra.get("tester_limited"):
        notes.append("tester-limited")
    if r.generator_limited and not r.extra.get("tester_limited"):
        notes.append("generator short")
    return f'<td class="{cls} t">{_e(verdict)}{(" (" + _e(", ".join(notes)) + ")") if notes else ""}</td>'


def throughput_table(records: Sequence[CaseRecord]) -> str:
    rows = []
    for r in records:
        m, x = r.measured, r.extra
        res = x.get("results") or {}
        ndr, pdr = res.get("NDR") or {}, res.get("PDR") or {}  # type: ignore[union-attr]
        rows.append([
            _e(_frame(r)), _num(x.get("theory_fps")), _num(m.get("tester_fps")), _num(m.get("ndr_fps")),
            _num(r.median, ".3f"), _num(r.efficiency_pct, ".1f"), _bounds(ndr), _num(m.get("pdr_fps")),  # type: ignore[arg-type]
            _bounds(pdr), _num(pdr.get("conditional_mbps"), ".3f"), _num(x.get("trials"), "d"),  # type: ignore[union-attr]
            _num(x.get("trial_s"), ".1f"), _status_cell(r),
        ])  # fmt: skip
    head = ["frame B", "line rate fps", "tester ceiling fps", "NDR fps", "NDR Mbit/s", "of line %", "NDR bounds Mbit/s",
            "PDR fps", "PDR bounds Mbit/s", "PDR cond. Mbit/s", "trials", "trial s", "verdict"]  # fmt: skip
    return _table(head, rows, (0, 12))


def latency_table(records: Sequence[CaseRecord]) -> str:
    rows = []
    for r in records:
        for row in r.extra.get("latency") or []:  # type: ignore[union-attr]
            rows.append([
                _e(_frame(r)), _num(row.get("share_pct"), "d"), _num(row.get("fps")), _num(row.get("min_us"), ".1f"),
                _num(row.get("p50_us"), ".1f"), _num(row.get("p90_us"), ".1f"), _num(row.get("p99_us"), ".1f"),
                _num(row.get("max_us"), ".1f"), _num(row.get("loss_pct"), ".4f"),
            ])  # fmt: skip
    if not rows:
        return "<p>Not measured (no throughput, or `--rfc2544-tests` left it out).</p>"
    head = ["frame B", "% of throughput", "offered fps", "min us", "p50 us", "p90 us", "p99 us", "max us", "loss %"]
    return _table(head, rows)


def loss_curve_table(records: Sequence[CaseRecord]) -> str:
    shares = sorted({int(p["share_pct"]) for r in records for p in r.extra.get("loss_curve") or []}, reverse=True)  # type: ignore[union-attr,index]
    if not shares:
        return "<p>Not measured (`--rfc2544-tests` left it out).</p>"
    rows = []
    for r in records:
        by = {int(p["share_pct"]): p for p in r.extra.get("loss_curve") or []}  # type: ignore[union-attr,index]
        cells = [_e(_frame(r))]
        for s in shares:
            p = by.get(s)
            if p is None:
                cells.append("")
            else:
                short = " *" if p.get("tester_short") else ""
                cells.append(f"{_num(p.get('loss_pct'), '.3f')}{short}")
        rows.append(cells)
    return _table(["frame B", *(f"{s} % of line" for s in shares)], rows)


def b2b_table(records: Sequence[CaseRecord]) -> str:
    rows = []
    for r in records:
        b = r.extra.get("b2b")
        if not isinstance(b, dict):
            continue
        rows.append([
            _e(_frame(r)), _num(b.get("frames"), ",d"), _num(b.get("buffer_frames"), ".1f"), _num(b.get("burst_fps")),
            _num(b.get("repeats"), "d"), _num(b.get("lossy_repeats"), "d"), _e(len(b.get("searched") or [])),
            _status(b.get("status", "-")),
        ])  # fmt: skip
    if not rows:
        return "<p>Not measured.</p>"
    head = ["frame B", "longest loss-free burst", "buffer implied (frames)", "burst fps", "repeats", "lossy repeats",
            "bursts tried", "status"]  # fmt: skip
    return _table(head, rows, (0, 7))


def recovery_reset_table(records: Sequence[CaseRecord]) -> str:
    rows = []
    for r in records:
        rec, rst = r.extra.get("recovery"), r.extra.get("reset")
        if not isinstance(rec, dict) and not isinstance(rst, dict):
            continue
        rec, rst = rec or {}, rst or {}
        rows.append([
            _e(_frame(r)), _num(rec.get("overload_fps")), _num(rec.get("lost_in_overload"), ",d"),
            _num(rec.get("recovery_ms"), ".1f"), _status(rec.get("status", "-")), _e(rst.get("reset_by", "-")),
            _num(rst.get("frames_lost"), ",d"), _num(rst.get("reset_ms"), ".3f"),
            _num(rst.get("longest_gap_ms"), ".1f"), _status(rst.get("status", "-")),
        ])  # fmt: skip
    if not rows:
        return "<p>Not measured.</p>"
    head = ["frame B", "overload fps (110 %)", "lost in overload", "recovery ms", "recovery", "reset by",
            "frames lost", "reset ms (lost / rate)", "longest gap ms", "reset"]  # fmt: skip
    return _table(head, rows, (0, 4, 5, 9))


def spacing_table(records: Sequence[CaseRecord]) -> str:
    """Per frame size, over every trial: each trial's median and 95th-percentile gap against the
    gap of its offered rate (100 %: evenly spaced), the share of gaps under half of it (clumped)."""
    rows = []
    for r in records:
        sp = [s for s in r.extra.get("spacing") or [] if isinstance(s, dict) and float(s.get("even_gap_us", 0)) > 0]  # type: ignore[union-attr]
        if not sp:
            continue
        med = [100 * float(s["median_gap_us"]) / float(s["even_gap_us"]) for s in sp]
        p95 = [100 * float(s["p95_gap_us"]) / float(s["even_gap_us"]) for s in sp]
        sources = sorted({str(s.get("source", "the tester's send times")) for s in sp})
        rows.append([
            _e(_frame(r)), _e(len(sp)), f"{min(med):.1f} - {max(med):.1f}", _num(max(p95), ".1f"),
            _num(max(float(s["clumped_pct"]) for s in sp), ".3f"),
            _num(max(float(s["max_gap_us"]) for s in sp), ",.1f"), _e(", ".join(sources)),
        ])  # fmt: skip
    if not rows:
        return "<p>No trial recorded its spacing.</p>"
    head = ["frame B", "trials", "median gap, % of even", "worst p95, % of even", "worst clumped %",
            "longest gap us", "measured from"]  # fmt: skip
    return _table(head, rows, (0, 6))


def _direction_section(direction: str, records: Sequence[CaseRecord]) -> str:
    goals = next((r.extra.get("goals") for r in records if r.extra.get("goals")), {}) or {}
    durations = next((r.extra.get("durations") for r in records if r.extra.get("durations")), "")
    ceilings_from = next(
        (r.extra.get("tester_ceiling_from") for r in records if r.extra.get("tester_ceiling_from")), "not recorded"
    )
    goal_lines = "".join(f"<li>{_e(g)}</li>" for g in goals.values())  # type: ignore[union-attr]
    return (
        f"<h2>{_e(direction)}</h2>"
        f"<h3>Throughput (RFC 9971 NDR = RFC 2544 throughput; PDR: loss up to the goal's ratio)</h3>"
        f"{throughput_table(records)}"
        f"<p class=small>The tester's ceilings: {_e(ceilings_from)}.</p>"
        f"<p class=small>Search goals:</p><ul class=small>{goal_lines}</ul>"
        f"<p class=small>{_e(durations)}</p>"
        f"<h3>Latency at shares of the throughput (one-way, send to receive)</h3>{latency_table(records)}"
        f"<h3>Frame loss rate (% lost at each share of the line rate; * the tester fell short of it)</h3>"
        f"{loss_curve_table(records)}"
        f"<h3>Back-to-back frames (bursts at the line rate)</h3>{b2b_table(records)}"
        f"<h3>System recovery (110 % of the throughput, then 50 %) and reset time (RFC 6201)</h3>"
        f"{recovery_reset_table(records)}"
        f"<h3>Spacing of the offered frames at the DUT's input, over every trial (gap: between consecutive "
        "frames; even: the gap of the trial's offered rate; clumped: under half of it)</h3>"
        f"{spacing_table(records)}"
    )


def by_direction(records: Sequence[CaseRecord]) -> dict[str, list[CaseRecord]]:
    out: dict[str, list[CaseRecord]] = {}
    for r in records:
        if r.scenario == SCENARIO and "frame_bytes" in r.extra:
            out.setdefault(str(r.extra.get("direction", r.case.split("-")[0])), []).append(r)
    return {d: sorted(rs, key=_frame) for d, rs in sorted(out.items())}


def headline(groups: dict[str, list[CaseRecord]]) -> str:
    parts = []
    for direction, rs in groups.items():
        limited = sum(bool(r.extra.get("tester_limited")) for r in rs)
        failed = sum(r.verdict in ("below threshold", "regression") for r in rs)
        parts.append(
            f"{direction} {len(rs)} frame sizes"
            + (f", {failed} below threshold" if failed else "")
            + (f", {limited} tester-limited" if limited else "")
        )
    return "; ".join(parts)


def rfc2544_html(records: Sequence[CaseRecord], title: str) -> str:
    groups = by_direction(records)
    sections = "".join(_direction_section(d, rs) for d, rs in groups.items())
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body><h1>{_e(title)}</h1>"
        "<p>Frames of RFC 2544's sizes (IPv4/UDP, numbered and time-stamped) from the project's frame tester; "
        "line rate: the link's theoretical frame rate (preamble and inter-frame gap counted); tester ceiling: "
        "the same sender and receiver joined without the DUT, before it is measured. A throughput within the "
        "stated margin of a ceiling below the line rate is the tester's, not the DUT's (tester-limited). "
        f"</p>{sections}</body></html>"
    )


def write_rfc2544_page(
    records: Sequence[CaseRecord], out_dir: Path, dut: str, run_id: str, allure_dir: Path | None, started: float
) -> Path | None:
    """rfc2544.html in `out_dir` and an Allure result showing it, when the run measured the family."""
    groups = by_direction(records)
    if not groups:
        return None
    title = f"RFC 2544 benchmark {run_id}, DUT {dut}: {headline(groups)}"
    page = out_dir / PAGE
    page.write_text(rfc2544_html(records, title))
    if allure_dir is None:
        return page
    failed = any(r.verdict in ("below threshold", "regression") for g in groups.values() for r in g)
    write_page_result(
        allure_dir, page, key="rfc2544_page", title=title, shown_as="RFC 2544: the standard's tables",
        link_name="RFC 2544 tables", dut=dut, feature=FEATURE, started=started, failed=failed,
    )  # fmt: skip
    return page
