"""The RFC 2544 family's tables: the search's goals and results, a case's figures as the RFC's
report tables, and a direction's page over every frame size of the run with its chart."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hil.report.background_charts import attach_chart
from hil.results.recorder import CaseRecord
from hil.scenarios.charts import sweep_chart
from hil.scenarios.mlrsearch import MlrResult
from hil.scenarios.sweep import attach_text

if TYPE_CHECKING:
    from hil.session import HilContext


def goals_text(res: MlrResult) -> str:
    lines = [g.goal.attributes() for g in res.goals]
    lines += res.result_lines("Mbit/s of frames")
    lines.append(
        f"{len(res.trials)} search trials, {res.total_trial_s:.1f} s of traffic"
        + (", generator-limited: the tester fell short of the load" if res.generator_limited else "")
    )
    return "\n".join(lines)


def case_text(rec: CaseRecord) -> str:
    """The case's RFC 2544 figures as the RFC's report tables."""
    m, x = rec.measured, rec.extra
    lines = [
        f"frame size {x['frame_bytes']} B, {x['direction']}; line rate {x['theory_fps']:,} frames/s "
        f"({rec.theory:.2f} Mbit/s of frames); the tester alone {m['tester_fps']:,} frames/s",
        f"throughput (NDR) {m.get('ndr_fps', 0):,} frames/s = {rec.median:.3f} Mbit/s = "
        f"{rec.efficiency_pct or 0:.2f} % of the line rate" + ("  (tester-limited)" if x.get("tester_limited") else ""),
        f"PDR {m.get('pdr_fps', '-')} frames/s; {x['trials']} search trials",
    ]
    if "latency" in x:
        lines.append(
            f"{'load':>6s} {'fps':>9s} {'loss %':>8s} {'min':>8s} {'p50':>8s} {'p90':>8s} {'p99':>8s} "
            f"{'max':>8s}  one-way latency, us"
        )
        for r in x["latency"]:  # type: ignore[attr-defined]
            lines.append(
                f"{r['share_pct']:5d}% {r['fps']:9d} {r['loss_pct']:8.4f} {r['min_us']:8.1f} {r['p50_us']:8.1f} "
                f"{r['p90_us']:8.1f} {r['p99_us']:8.1f} {r['max_us']:8.1f}"
            )
    if "loss_curve" in x:
        lines.append(
            "frame loss rate: "
            + ", ".join(
                f"{r['share_pct']} %: {r['loss_pct']} %" + (" (tester short)" if r["tester_short"] else "")
                for r in x["loss_curve"]  # type: ignore[attr-defined]
            )
        )
    if "b2b" in x:
        b = x["b2b"]
        lines.append(
            f"back-to-back: {b['frames']} frames ({b['status']}); repeats {b.get('repeats', 0)}, lossy "  # type: ignore[index]
            f"{b.get('lossy_repeats', 0)}; buffer {b.get('buffer_frames', '-')} frames; the bursts left at "
            f"{b.get('burst_fps', '-')} frames/s"
        )  # type: ignore[union-attr]
    if "reset" in x:
        r = x["reset"]
        lines.append(
            f"reset (RFC 6201): {r.get('reset_ms', '-')} ms from the frames lost, {r.get('longest_gap_ms', '-')} "  # type: ignore[union-attr]
            f"ms the longest gap ({r['status']})"
        )  # type: ignore[index]
    if "recovery" in x:
        r = x["recovery"]
        lines.append(f"system recovery: {r.get('recovery_ms', '-')} ms ({r['status']})")  # type: ignore[index,union-attr]
    return "\n".join(lines)


def attach_direction_page(hil: HilContext, scenario: str, direction: str) -> None:
    """The direction's RFC 2544 tables over every frame size of the run, and its chart."""
    records = sorted(hil.recorder.latest(scenario, f"{direction}-"), key=lambda r: int(r.extra["frame_bytes"]))  # type: ignore[call-overload]
    if not records:
        return
    head = (
        f"{'frame B':>7s} {'line fps':>9s} {'tester fps':>10s} {'NDR fps':>9s} {'Mbit/s':>8s} {'eff %':>6s} "
        f"{'PDR fps':>9s} {'lat p50 us':>10s} {'p99':>7s} {'loss@line %':>11s} {'b2b':>7s} {'buffer':>7s} "
        f"{'recov ms':>8s} {'reset ms':>8s}"
    )
    lines = [
        f"RFC 2544, {direction}: throughput, latency at it, frame loss at the line rate, back-to-back, recovery",
        head,
    ]
    for r in records:
        m = r.measured
        lat = {row["share_pct"]: row for row in r.extra.get("latency", [])}.get(100, {})  # type: ignore[union-attr,attr-defined]
        lines.append(
            f"{r.extra['frame_bytes']:7d} {r.extra['theory_fps']:9,d} {m['tester_fps']:10,.0f} "
            f"{m.get('ndr_fps', 0):9,.0f} "
            f"{r.median:8.3f} {r.efficiency_pct or 0:6.1f} {m.get('pdr_fps', 0):9,.0f} {lat.get('p50_us', '-'):>10} "
            f"{lat.get('p99_us', '-'):>7} {m.get('loss_at_line_pct', '-'):>11} {m.get('b2b_frames', '-'):>7} "
            f"{m.get('b2b_buffer_frames', '-'):>7} {m.get('recovery_ms', '-'):>8} {m.get('reset_ms', '-'):>8}"
            + ("  tester-limited" if r.extra.get("tester_limited") else "")
        )
    attach_text(f"RFC 2544 {direction}: every frame size", "\n".join(lines))
    attach_chart(
        f"RFC 2544 {direction}: throughput vs frame size",
        sweep_chart,
        f"RFC 2544 throughput {direction} (NDR), the tester's own ceiling",
        "frame size (bytes)",
        {
            "throughput (NDR)": [(float(r.extra["frame_bytes"]), r.median) for r in records],  # type: ignore[arg-type]
            "the tester without the DUT": [
                (float(r.extra["frame_bytes"]), float(r.measured["tester_mbps"])) for r in records
            ],
        },  # type: ignore[arg-type]
        theory=[(float(r.extra["frame_bytes"]), r.theory or 0.0) for r in records],  # type: ignore[arg-type]
        ylabel="Mbit/s of frames",
        theory_label="line rate",
    )
