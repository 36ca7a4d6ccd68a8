"""PNG charts for the report: throughput against a swept parameter, loss over time."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def _png(fig: plt.Figure) -> bytes:
    """The figure laid out and rendered as PNG bytes, then released."""
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def sweep_chart(
    title: str,
    xlabel: str,
    series: dict[str, list[tuple[float, float]]],
    theory: list[tuple[float, float]] | None = None,
    ylabel: str = "goodput (Mbit/s)",
    logx: bool = False,
    theory_label: str = "theoretical",
    band_pct: tuple[float, float] | None = None,
) -> bytes:
    """Measured series against the theoretical (or expected) values; `band_pct` shades the
    tolerance around them (e.g. (90, 105): 90-105 % of each theoretical value)."""
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    if theory and band_pct:
        pts = sorted(theory)
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        lo, hi = band_pct
        ax.fill_between(xs, [y * lo / 100 for y in ys], [y * hi / 100 for y in ys], color="grey", alpha=0.15,
                        label=f"limits: {lo:g}-{hi:g} % of {theory_label.split(':')[0]}")  # fmt: skip
    for name, points in series.items():
        pts = sorted(points)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    if theory:
        pts = sorted(theory)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="--", color="grey", label=theory_label)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    ax.legend()
    return _png(fig)


def timeline_chart(title: str, series: dict[str, list[tuple[float, float]]], ylabel: str) -> bytes:
    """One subplot per series (e.g. lost packets per burst over time for each stream)."""
    n = max(1, len(series))
    fig, axes = plt.subplots(n, 1, figsize=(8, 1.8 * n + 1), dpi=100, sharex=True, squeeze=False)
    for ax, (name, points) in zip(axes[:, 0], series.items(), strict=False):
        ax.step([p[0] for p in points], [p[1] for p in points], where="post")
        top = max((p[1] for p in points), default=0.0)
        ax.set_ylim(bottom=0, top=max(1.0, top * 1.15))
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.set_title(name, fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(title)
    return _png(fig)


def search_chart(
    title: str,
    panels: dict[str, list[tuple[float, bool, float, float]]],
    found: dict[str, float | None],
    ylabel: str = "offered (Mbit/s)",
    zoom_pct: float = 3.0,
) -> bytes:
    """One column per search (e.g. per datagram length): the rate each trial offered against the
    trial number (o passed, x failed), the lower and upper bounds after each trial as step lines
    with the band between them, and the rate found; the top row shows every trial, the bottom
    row zooms to +-`zoom_pct` % around the rate found (the last bounds when none was found). A
    trial is (offered, passed, lo, hi); lo 0 means no lower bound yet."""
    n = max(1, len(panels))
    fig, axes = plt.subplots(2, n, figsize=(4.2 * n + 0.8, 7.0), dpi=100, squeeze=False)
    for col, (name, trials) in enumerate(panels.items()):
        xs = list(range(1, len(trials) + 1))
        steps = [*xs, len(xs) + 0.6]  # each bound holds from its trial to the next
        lo = [t[2] if t[2] > 0 else float("nan") for t in trials]
        hi = [t[3] for t in trials]
        rate = found.get(name)
        centre = rate or next((v for v in reversed(lo) if v == v), None) or (hi[-1] if hi else 0.0)
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
                ax.axhline(rate, linestyle="--", color="grey", label=f"found {rate:.3f}")
            ax.set_xticks(xs)
            ax.grid(True, alpha=0.3)
            if row == 0:
                ax.set_title(name, fontsize=9)
                ax.set_ylim(bottom=0, top=max([t[0] for t in trials] + [1.0]) * 1.08)
                ax.legend(fontsize=7)
            else:
                span = max(centre * zoom_pct / 100, 1e-3)
                ax.set_ylim(centre - span, centre + span)
                ax.set_xlabel("trial")
                ax.set_title(f"within {zoom_pct:g} % of {centre:.3f}", fontsize=8)
        axes[0, col].set_ylabel(ylabel if col == 0 else "")
        axes[1, col].set_ylabel(ylabel if col == 0 else "")
    fig.suptitle(title)
    return _png(fig)
