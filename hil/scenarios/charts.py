"""PNG charts for the report: throughput against a swept parameter (with its efficiency), loss
over time, the capacity search's trials. A y axis is zoomed to what it shows - the points and
every reference line (theory, threshold, offered rate) - with headroom above and below, so no
point or line sits on the frame."""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

HEADROOM_PCT = 7.0  # free room above the highest value (and below the lowest), in % of the axis height
MIN_SPAN_PCT = 5.0  # a zoomed axis spans at least this % of its largest value (noise is not blown up)
ZERO_BELOW = 0.6  # non-negative data whose zoomed axis would start below 60 % of its top starts at 0
LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0, "fontsize": 8}


def zoomed_limits(
    values: Iterable[float],
    headroom_pct: float = HEADROOM_PCT,
    min_span_pct: float = MIN_SPAN_PCT,
    zero_below: float = ZERO_BELOW,
) -> tuple[float, float]:
    """y limits holding every finite value with `headroom_pct` % of the axis free above the
    highest and below the lowest. The values' span is taken as at least `min_span_pct` % of the
    largest magnitude (the extra room goes below: 94.8-94.93 Mbit/s is not stretched over the
    whole frame). Non-negative values whose zoomed axis would start below `zero_below` x its top
    get an axis from 0 instead (from just below 0 when a value is at or near 0): a sweep over a
    wide range reads best from zero, one within a few % of its top is zoomed."""
    vals = [v for v in values if math.isfinite(v)]
    if not vals:
        return 0.0, 1.0
    lo, hi = min(vals), max(vals)
    span = max(hi - lo, max(abs(lo), abs(hi)) * min_span_pct / 100)
    if span == 0:  # all zero
        return -0.5, 0.5
    h = headroom_pct / 100
    height = span / (1 - 2 * h)
    top = hi + h * height
    bottom = top - height
    if lo >= 0 and bottom < zero_below * top:
        if lo >= h * hi / (1 - h):  # from 0, with the headroom above
            return 0.0, hi / (1 - h)
        height = hi / (1 - 2 * h)  # a value at 0: room below it too
        return -h * height, hi + h * height
    return bottom, top


def limit_line(
    bounds: Iterable[tuple[float, Iterable[tuple[str, str, float]]]], bound: str, metric: str
) -> list[tuple[float, float]]:
    """The (x, value) of one limit over a sweep's points, from each point's x and its limits as
    (min|max, metric, value) tuples (Limits.bounds()); points without that limit are left out."""
    return [(x, v) for x, limits in bounds for b, m, v in limits if b == bound and m == metric]


@cache
def _pyplot() -> ModuleType:
    """matplotlib's pyplot on its Agg backend, imported when the first chart is drawn, not when
    the families are: every pytest start (a child run's, a CI job's) would pay for it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot


def load_pyplot() -> None:
    """pyplot loaded now (a process that will draw: hil.report.background_charts's helper)."""
    _pyplot()


def _to_hex(color: object) -> str:
    from matplotlib.colors import to_hex as hex_of

    return hex_of(color)  # type: ignore[arg-type]


def _png(fig: Figure, rect: tuple[float, float, float, float] = (0, 0, 1, 1), crop: bool = False) -> bytes:
    """The figure laid out (its axes within `rect`; `crop`: a figure of text cut to its text)
    and rendered as PNG bytes, then released."""
    buf = io.BytesIO()
    if crop:
        fig.savefig(buf, format="png", bbox_inches="tight", pad_inches=0.15)
    else:
        fig.tight_layout(rect=rect)
        fig.savefig(buf, format="png")
    _pyplot().close(fig)
    return buf.getvalue()


def _count(n: float) -> str:
    """A packet count with its thousands apart: 12800 -> '12 800'."""
    return f"{round(n):,}".replace(",", " ")


def _limit(ax: Axes, points: Sequence[tuple[float, float]], label: str, unit: str) -> None:
    """A limit per point: one horizontal line when all points share it (its value in the
    label), else a step per point."""
    pts = sorted(points)
    if len({p[1] for p in pts}) == 1:
        ax.axhline(pts[0][1], color="tab:red", linestyle="--", linewidth=1.3, label=f"{label}: {pts[0][1]:g} {unit}")
    else:
        ax.step([p[0] for p in pts], [p[1] for p in pts], where="mid", color="tab:red", linestyle="--",
                linewidth=1.3, label=label)  # fmt: skip


def _reference(
    ax: Axes, points: Sequence[tuple[float, float]], label: str, color: str, linestyle: str, width: float = 1.6
) -> None:
    """A value per point (theory, offered rate) as a line, a single point as a wide tick. A thin
    line is drawn over the measured points (visible where they meet it), a wide one is a pale
    halo under them."""
    pts = sorted(points)
    wide = width > 3
    line = ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=linestyle, color=color, linewidth=width,
                   alpha=0.35 if wide else 1.0, label=label, zorder=3 if wide else 5)[0]  # fmt: skip
    line.set_solid_capstyle("butt")
    if len(pts) == 1:
        line.set(marker="_", markersize=24, markeredgewidth=width)


def _unit(label: str) -> str:
    """The unit in an axis label's last parentheses: 'goodput (Mbit/s)' -> 'Mbit/s'."""
    return label[label.rfind("(") + 1 :].rstrip(")") if "(" in label else ""


def sweep_chart(
    title: str,
    xlabel: str,
    series: dict[str, list[tuple[float, float]]],
    theory: list[tuple[float, float]] | None = None,
    ylabel: str = "goodput (Mbit/s)",
    logx: bool = False,
    theory_label: str = "theoretical",
    band_pct: tuple[float, float] | None = None,
    threshold: list[tuple[float, float]] | None = None,
    offered: list[tuple[float, float]] | None = None,
    min_efficiency: list[tuple[float, float]] | None = None,
    threshold_label: str = "threshold (min median)",
    efficiency_panel: bool = True,
    xticks: Sequence[tuple[float, str]] | None = None,
) -> bytes:
    """Measured series against the theoretical (or expected) values; `band_pct` shades the
    tolerance around them (e.g. (90, 105): 90-105 % of each theoretical value). `threshold` is
    the lowest median each point may have (a red dashed line, a step where the points' limits
    differ), `offered` the rate each point was offered (UDP). With a theory, a panel below shows
    each point as % of it, with `min_efficiency` (% per point) and the offered rate in % too.
    Both y axes are zoomed to their points and lines (zoomed_limits)."""
    ref = theory_label.split(":")[0]
    theory_pts = sorted(p for p in theory or [] if p[1] > 0)
    with_eff = bool(theory_pts) and efficiency_panel
    if with_eff:
        fig, (ax, eax) = _pyplot().subplots(2, 1, figsize=(9.5, 6.6), dpi=100, sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})  # fmt: skip
    else:
        fig, ax = _pyplot().subplots(figsize=(9.5, 4.5), dpi=100)
        eax = None
    ys: list[float] = []
    if theory_pts and band_pct:
        xs, ts = [p[0] for p in theory_pts], [p[1] for p in theory_pts]
        lo, hi = band_pct
        band = ([y * lo / 100 for y in ts], [y * hi / 100 for y in ts])
        ax.fill_between(xs, *band, color="grey", alpha=0.15, label=f"limits: {lo:g}-{hi:g} % of {ref}")
        ys += band[0] + band[1]
    if theory_pts:
        _reference(ax, theory_pts, theory_label, "grey", "--")
        ys += [p[1] for p in theory_pts]
    offered_label = "offered rate"
    if offered and theory_pts:  # e.g. "offered rate (90 % of theoretical)" when every point was offered the same share
        shares = {round(100.0 * y / dict(theory_pts)[x], 1) for x, y in offered if x in dict(theory_pts)}
        offered_label += f" ({shares.pop():g} % of {ref})" if len(shares) == 1 else ""
    if offered:
        _reference(ax, offered, offered_label, "tab:purple", "-", width=7)
        ys += [p[1] for p in offered]
    if threshold:
        _limit(ax, threshold, threshold_label, _unit(ylabel))
        ys += [p[1] for p in threshold]
    colors: dict[str, str] = {}
    for name, points in series.items():
        pts = sorted(points)
        (line,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name, zorder=4)
        colors[name] = _to_hex(line.get_color())
        ys += [p[1] for p in pts]
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_ylim(*zoomed_limits(ys))
    ax.grid(True, alpha=0.3)
    ax.legend(**LEGEND)  # type: ignore[arg-type]
    _ticks(eax if eax is not None else ax, xticks)
    if eax is None:
        ax.set_xlabel(xlabel)
        return _png(fig)
    per_x = dict(theory_pts)

    def pct(points: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
        return [(x, 100.0 * y / per_x[x]) for x, y in sorted(points) if x in per_x]

    eys = [100.0]
    if band_pct:
        lo, hi = band_pct
        eax.axhspan(lo, hi, color="grey", alpha=0.15, label=f"limits: {lo:g}-{hi:g} %")
        for edge in band_pct:
            eax.axhline(edge, color="tab:red", linestyle="--", linewidth=1.0, alpha=0.7)
        eys += [lo, hi]
    eax.axhline(100.0, color="grey", linestyle="--", linewidth=1.2, label=f"100 % = {ref}", zorder=5)
    if offered:
        off = pct(offered)
        _reference(eax, off, offered_label, "tab:purple", "-", width=7)
        eys += [p[1] for p in off]
    if min_efficiency:
        _limit(eax, min_efficiency, "threshold (min efficiency)", "%")
        eys += [p[1] for p in min_efficiency]
    for name, points in series.items():
        eff = pct(points)
        eax.plot([p[0] for p in eff], [p[1] for p in eff], marker="o", color=colors[name], label=name, zorder=4)
        eys += [p[1] for p in eff]
    eax.set_ylabel(f"% of {ref}")
    eax.set_xlabel(xlabel)
    eax.set_ylim(*zoomed_limits(eys))
    eax.grid(True, alpha=0.3)
    eax.legend(**LEGEND)  # type: ignore[arg-type]
    return _png(fig)


def timeline_chart(
    title: str,
    series: dict[str, list[tuple[float, float]]],
    ylabel: str,
    totals: dict[str, tuple[int, int]] | None = None,
) -> bytes:
    """One subplot per series that lost something (e.g. lost packets per burst over time for
    each stream); `totals` gives a series' (lost, sent) packets for its title. A series that
    lost nothing gets no empty panel but a line of text ('stream 1: 0 of 12 800 lost'); when
    no series lost anything the chart is that text alone, under '0 of N lost in every stream'."""
    totals = totals or {}

    def lost(name: str) -> float:
        return totals[name][0] if name in totals else sum(p[1] for p in series[name])

    def of_sent(name: str) -> str:
        n = _count(lost(name))
        return f"{n} of {_count(totals[name][1])} lost" if name in totals else f"{n} lost"

    drawn = [n for n in series if lost(n) > 0 or any(p[1] > 0 for p in series[n])]
    quiet = [n for n in series if n not in drawn]
    if not drawn:  # one small text figure, cropped to its text
        sent = [totals[n][1] for n in quiet if n in totals]
        total = f" (0 of {_count(sum(sent))} packets in total)" if sent and len(sent) == len(quiet) else ""
        lines = [f"{n}: {of_sent(n)}" for n in quiet] or ["no streams"]
        fig = _pyplot().figure(figsize=(8, 1.0 + 0.2 * len(lines)), dpi=100)
        fig.text(0.02, 0.98, title, fontsize=12, va="top")
        fig.text(0.02, 0.98 - 0.4 / fig.get_figheight(), f"0 lost in every stream{total}", fontsize=10,
                 fontweight="bold", va="top")  # fmt: skip
        fig.text(0.04, 0.98 - 0.75 / fig.get_figheight(), "\n".join(lines), fontsize=9, va="top", linespacing=1.4,
                 family="monospace")  # fmt: skip
        return _png(fig, crop=True)
    note = 0.3 + 0.2 * len(quiet) if quiet else 0.0
    heights = [1.8] * len(drawn) + ([note] if quiet else [])
    fig, axes = _pyplot().subplots(len(heights), 1, figsize=(8, sum(heights) + 1.0), dpi=100, squeeze=False,
                             gridspec_kw={"height_ratios": heights})  # fmt: skip
    panels = axes[: len(drawn), 0]
    for ax in panels[1:]:
        ax.sharex(panels[0])
    for ax, name in zip(panels, drawn, strict=True):
        points = series[name]
        ax.step([p[0] for p in points], [p[1] for p in points], where="post", linewidth=1.0)
        hits = [p for p in points if p[1] > 0]  # a burst's loss as a dot: a spike of one burst is thin
        ax.plot([p[0] for p in hits], [p[1] for p in hits], "o", color="tab:red", markersize=3.5)
        ax.set_ylim(*zoomed_limits([0.0, 1.0, *(p[1] for p in points)], min_span_pct=0.0))
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.set_title(f"{name}: {of_sent(name)}", fontsize=9)
        ax.grid(True, alpha=0.3)
    panels[-1].set_xlabel("time (s)")
    if quiet:
        text = axes[-1, 0]
        text.axis("off")
        body = "\n".join(f"{n}: {of_sent(n)}" for n in quiet)
        text.text(0.0, 1.0, f"no loss:\n{body}", fontsize=8.5, va="top", family="monospace", linespacing=1.4)
    fig.suptitle(title)
    return _png(fig)


def search_chart(
    title: str,
    panels: dict[str, list[tuple[float, bool, float, float]]],
    found: dict[str, float | None],
    ylabel: str = "offered (Mbit/s)",
    zoom_pct: float = 3.0,
    loss_target_pct: dict[str, float] | None = None,
) -> bytes:
    """One column per search (e.g. per datagram length): the rate each trial offered against the
    trial number (o passed, x failed), the lower and upper bounds after each trial as step lines
    with the band between them, and the rate found; the top row shows every trial, the bottom
    row zooms to +-`zoom_pct` % around the rate found (the last bounds when none was found). A
    trial is (offered, passed, lo, hi); lo 0 means no lower bound yet. A column's title states
    the rate found (or none) and its loss target (`loss_target_pct` per column)."""
    n = max(1, len(panels))
    fig, axes = _pyplot().subplots(2, n, figsize=(4.2 * n + 0.8, 7.0), dpi=100, squeeze=False)
    for col, (name, trials) in enumerate(panels.items()):
        xs = list(range(1, len(trials) + 1))
        steps = [*xs, len(xs) + 0.6]  # each bound holds from its trial to the next
        lo = [t[2] if t[2] > 0 else float("nan") for t in trials]
        hi = [t[3] for t in trials]
        rate = found.get(name)
        centre = rate or next((v for v in reversed(lo) if v == v), None) or (hi[-1] if hi else 0.0)
        target = (loss_target_pct or {}).get(name)
        at = f" at loss <= {target:g} %" if target is not None else ""
        head = f"{name}: found {rate:.3f} {_unit(ylabel)}{at}" if rate else f"{name}: no rate found{at}"
        if not trials:  # nothing measured for this one: said, not drawn
            for ax in axes[:, col]:
                ax.text(0.5, 0.5, "no trial", ha="center", va="center", transform=ax.transAxes)
                ax.set_title(head, fontsize=9)
            continue
        for row, ax in enumerate(axes[:, col]):
            ax.step(steps, [*hi, hi[-1]] if hi else [], where="post", color="tab:red", alpha=0.7, label="upper bound")
            ax.step(steps, [*lo, lo[-1]] if lo else [], where="post", color="tab:green", alpha=0.7, label="lower bound")
            band_lo = [v if v == v else 0.0 for v in lo]
            if hi:
                ax.fill_between(
                    steps, [*band_lo, band_lo[-1]], [*hi, hi[-1]], step="post", color="tab:blue", alpha=0.12
                )
            ok = [(x, t[0]) for x, t in zip(xs, trials, strict=True) if t[1]]
            bad = [(x, t[0]) for x, t in zip(xs, trials, strict=True) if not t[1]]
            ax.plot([p[0] for p in ok], [p[1] for p in ok], "o", color="tab:green", label="passed")
            ax.plot([p[0] for p in bad], [p[1] for p in bad], "x", color="tab:red", markersize=8, label="failed")
            if rate:
                ax.axhline(rate, linestyle="--", color="grey", label="rate found")
            ax.set_xticks(xs)
            ax.set_xlim(0.4, len(xs) + 0.8)
            ax.grid(True, alpha=0.3)
            if row == 0:
                ax.set_title(head, fontsize=9)
                tops = [t[0] for t in trials] + [v for v in hi if v == v] + [1.0]
                ax.set_ylim(bottom=0, top=max(tops) * (1 + HEADROOM_PCT / 100))
            else:
                span = max(centre * zoom_pct / 100, 1e-3)
                ax.set_ylim(centre - span, centre + span)
                ax.set_xlabel("trial")
                ax.set_title(f"within {zoom_pct:g} % of {centre:.3f}", fontsize=8)
        axes[0, col].set_ylabel(ylabel if col == 0 else "")
        axes[1, col].set_ylabel(ylabel if col == 0 else "")
    fig.suptitle(title)
    keep: dict[str, object] = {}  # one legend under the columns, off the data
    for ax in axes[0, :]:
        handles, labels = ax.get_legend_handles_labels()
        keep |= {lab: h for h, lab in zip(handles, labels, strict=True) if lab not in keep}
    fig.legend(list(keep.values()), list(keep), loc="lower center", ncol=len(keep), fontsize=8, frameon=False)
    return _png(fig, rect=(0, 0.04, 1, 1))


def _ticks(ax: Axes, xticks: Sequence[tuple[float, str]] | None) -> None:
    """Named points on the x axis (a ladder of builds: one tick per build, its name)."""
    if xticks:
        ax.set_xticks([x for x, _ in xticks], [name for _, name in xticks])


DUT_SIDE = ("dut_cpu_pct", "dut_tcp_retrans", "dut_tcp_ooseq", "pool_free")  # what dut_side_chart draws
RFC6349_FIGURES = ("ttr", "tcp_efficiency_pct", "buffer_delay_pct")  # what rfc6349_chart draws beside the goodput


def has_dut_side(points: Sequence[tuple[float, dict[str, float]]]) -> bool:
    """Whether dut_side_chart has anything to draw of these points."""
    return any(k in m for _, m in points for k in DUT_SIDE)


def has_rfc6349(points: Sequence[tuple[float, float, dict[str, float]]]) -> bool:
    """Whether rfc6349_chart has anything to draw of these points."""
    return any(k in m for _, _, m in points for k in RFC6349_FIGURES)


def dut_side_chart(
    title: str, xlabel: str, points: Sequence[tuple[float, dict[str, float]]], logx: bool = False,
    xticks: Sequence[tuple[float, str]] | None = None,
) -> bytes | None:  # fmt: skip
    """The DUT's side of a sweep's points (hil.results.dut_side): its CPU load above, the TCP
    segments it sent again and received out of sequence and its least free data-path pool entries
    below, against the swept value. None when no point has any of them."""
    if not has_dut_side(points):
        return None
    pts = sorted(points, key=lambda p: p[0])
    cpu = [(x, m["dut_cpu_pct"]) for x, m in pts if "dut_cpu_pct" in m]
    counts = {
        "TCP segments sent again": [(x, m["dut_tcp_retrans"]) for x, m in pts if "dut_tcp_retrans" in m],
        "TCP segments received out of sequence": [(x, m["dut_tcp_ooseq"]) for x, m in pts if "dut_tcp_ooseq" in m],
        "least free pool entries (pool_free)": [(x, m["pool_free"]) for x, m in pts if "pool_free" in m],
    }
    fig, (ax, cax) = _pyplot().subplots(2, 1, figsize=(9.5, 5.8), dpi=100, sharex=True,
                                  gridspec_kw={"height_ratios": [1, 1]})  # fmt: skip
    if cpu:
        ax.plot([p[0] for p in cpu], [p[1] for p in cpu], marker="o", color="tab:orange", label="DUT CPU busy")
        ax.legend(**LEGEND)  # type: ignore[arg-type]
    else:
        ax.text(0.5, 0.5, "the DUT does not report its CPU load", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylim(0, 105)
    ax.set_ylabel("DUT CPU (%)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ys: list[float] = [0.0]
    for (name, series), marker in zip(counts.items(), ("o", "s", "^"), strict=True):
        if series:
            cax.plot([p[0] for p in series], [p[1] for p in series], marker=marker, label=name)
            ys += [p[1] for p in series]
    cax.set_ylim(*zoomed_limits(ys))
    cax.set_ylabel("segments; free entries")
    cax.set_xlabel(xlabel)
    cax.grid(True, alpha=0.3)
    if len(ys) > 1:
        cax.legend(**LEGEND)  # type: ignore[arg-type]
    if logx:
        cax.set_xscale("log", base=2)
    _ticks(cax, xticks)
    return _png(fig)


def rfc6349_chart(
    title: str, xlabel: str, points: Sequence[tuple[float, float, dict[str, float]]], logx: bool = False,
    xticks: Sequence[tuple[float, str]] | None = None,
) -> bytes | None:  # fmt: skip
    """RFC 6349's figures of a TCP group with its throughput, against the swept value: the goodput
    (x, median, metrics) on top, then the Transfer Time Ratio (1 = the ideal), TCP Efficiency and
    Buffer Delay %, each where the points carry it. None when no point has any of them."""
    if not has_rfc6349(points):
        return None
    pts = sorted(points, key=lambda p: p[0])
    panels = [
        ("goodput (Mbit/s)", [(x, mbps) for x, mbps, _ in pts], None),
        ("Transfer Time Ratio", [(x, m["ttr"]) for x, _, m in pts if "ttr" in m], 1.0),
        ("TCP efficiency (%)", [(x, m["tcp_efficiency_pct"]) for x, _, m in pts if "tcp_efficiency_pct" in m], 100.0),
        ("buffer delay (%)", [(x, m["buffer_delay_pct"]) for x, _, m in pts if "buffer_delay_pct" in m], 0.0),
    ]
    fig, axes = _pyplot().subplots(len(panels), 1, figsize=(9.5, 8.0), dpi=100, sharex=True)
    for ax, (label, series, ideal) in zip(axes, panels, strict=True):
        if series:
            ax.plot([p[0] for p in series], [p[1] for p in series], marker="o", label=label)
            ys = [p[1] for p in series] + ([ideal] if ideal is not None else [])
            ax.set_ylim(*zoomed_limits(ys))
        else:
            ax.text(0.5, 0.5, f"no {label.split(' (')[0]} measured", ha="center", va="center", transform=ax.transAxes)
        if ideal is not None:
            ax.axhline(ideal, color="tab:green", linestyle=":", linewidth=1, label="ideal")
        ax.set_ylabel(label, fontsize=8)
        ax.grid(True, alpha=0.3)
    axes[0].set_title(title)
    axes[-1].set_xlabel(xlabel)
    if logx:
        axes[-1].set_xscale("log", base=2)
    _ticks(axes[-1], xticks)
    return _png(fig)


def trend_chart(title: str, values: Sequence[float], groups: Sequence[tuple[int, int, float]], unit: str,
                since: int | None = None, color: str = "tab:blue", build: str | None = None) -> bytes:  # fmt: skip
    """A small chart of one case metric over the runs analysed (oldest left): each run a dot, each
    group of steady runs its mean as a line over its runs, the run a change began a dashed line
    labelled with the build it began with."""
    fig, ax = _pyplot().subplots(figsize=(5.2, 1.9), dpi=80)
    xs = list(range(1, len(values) + 1))
    ax.plot(xs, values, "o", markersize=3, color="tab:gray")
    for start, stop, mean in groups:
        ax.plot([start + 0.6, stop + 0.4], [mean, mean], color=color, linewidth=2.2)
    if since is not None:
        ax.axvline(since + 0.5, color=color, linestyle="--", linewidth=1)
        if build:
            ax.annotate(f"build {build}", (since + 0.6, 0.04), xycoords=("data", "axes fraction"), fontsize=6,
                        color=color)  # fmt: skip
    ax.set_ylim(*zoomed_limits(list(values)))
    ax.set_title(title, fontsize=8)
    ax.set_ylabel(unit, fontsize=7)
    ax.set_xlabel("run (oldest left)", fontsize=7)
    ax.tick_params(labelsize=7)
    ax.grid(True, alpha=0.3)
    return _png(fig)


def signal_chart(
    title: str,
    points: Sequence[tuple[float, int | None, float]],
    model: Sequence[tuple[float, float]] = (),
    bad_db: Sequence[float] = (),
    zero_db: float | None = None,
    floors: dict[int, float] | None = None,
    keeps: Sequence[tuple[float, float]] = (),
    reporter: str = "the DUT",
) -> bytes:
    """Goodput against RSSI (strong signal on the left; `reporter` is whose radio reported it) and
    against attenuation, side by side:
    `points` as (attenuation dB, RSSI dBm or None, Mbit/s), the radio model's expectation per
    attenuation, the bad points ringed red, the fall to zero marked, the at-RSSI floors as red
    steps (every point at that RSSI or stronger must be above), `keeps` as (% of the best, Mbit/s)
    dotted lines."""
    fig, (by_rssi, by_att) = _pyplot().subplots(1, 2, figsize=(11.5, 4.2))
    att = [p[0] for p in points]
    mbps = [p[2] for p in points]
    known = [(p[1], p[2], p[0]) for p in points if p[1] is not None]
    values = [*mbps, *(m for _, m in model), *(floors or {}).values()]
    lo, hi = zoomed_limits([0.0, *values])
    rssi_of = {a: r for a, r, _ in ((p[0], p[1], p[2]) for p in points) if r is not None}
    for ax, xs, xlabel in ((by_rssi, [k[0] for k in known], f"RSSI (dBm), as {reporter} reported it"),
                           (by_att, att, "attenuation (dB)")):  # fmt: skip
        ys = [k[1] for k in known] if ax is by_rssi else mbps
        ax.plot(xs, ys, marker="o", color="tab:blue", linewidth=1.6, label="measured (median)", zorder=6)
        if ax is by_att and model:
            _reference(ax, list(model), "radio model", "tab:green", "-", width=6)
        if ax is by_rssi and model:
            pts = [(rssi_of[a], m) for a, m in model if a in rssi_of]
            if pts:
                _reference(ax, pts, "radio model", "tab:green", "-", width=6)
        bad_x = [a if ax is by_att else rssi_of.get(a) for a in bad_db]
        bad_y = [m for a, m in zip(att, mbps, strict=True) if a in bad_db]
        pairs = [(x, y) for x, y in zip(bad_x, bad_y, strict=False) if x is not None]
        if pairs:
            ax.scatter([x for x, _ in pairs], [y for _, y in pairs], s=180, facecolors="none", edgecolors="tab:red",
                       linewidths=2, label="bad point (> 30 % drop)", zorder=7)  # fmt: skip
        if zero_db is not None and ax is by_att:
            ax.axvline(zero_db, color="black", linestyle=":", linewidth=1.3, label=f"fell to zero at {zero_db:g} dB")
        for pct, level in keeps:
            ax.axhline(level, color="tab:gray", linestyle=":", linewidth=1, label=f"{pct:g} % of the best")
        if floors and ax is by_rssi:
            for rssi, floor in sorted(floors.items()):
                ax.plot([rssi, max([rssi, *xs]) + 2], [floor, floor], color="tab:red", linestyle="--",
                        linewidth=1.3, label=f"floor {floor:g} Mbit/s, {rssi} dBm or more")  # fmt: skip
        ax.set_xlabel(xlabel)
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_ylim(lo, hi)
        ax.grid(True, alpha=0.3)
    by_rssi.invert_xaxis()
    by_rssi.set_title("against RSSI", fontsize=10)
    by_att.set_title("against attenuation", fontsize=10)
    handles, labels = [], []
    for ax in (by_rssi, by_att):
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(0.8, 0.88), fontsize=8)
    fig.suptitle(title, fontsize=11)
    return _png(fig, rect=(0, 0, 0.8, 1))
