"""PNG charts for the report: throughput against a swept parameter, loss over time."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def sweep_chart(
    title: str,
    xlabel: str,
    series: dict[str, list[tuple[float, float]]],
    theory: list[tuple[float, float]] | None = None,
    ylabel: str = "goodput (Mbit/s)",
    logx: bool = False,
) -> bytes:
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    for name, points in series.items():
        pts = sorted(points)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    if theory:
        pts = sorted(theory)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="--", color="grey", label="theoretical")
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


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
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
