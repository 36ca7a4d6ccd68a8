"""Threshold checks: every number is recorded first, then checked here; a failure message shows
the measured, the threshold and the theoretical value."""

from __future__ import annotations

from dataclasses import dataclass

from hil.config.thresholds import Limits, Trend

BELOW_THRESHOLD = "BELOW THRESHOLD"


class GeneratorShortfall(AssertionError):
    """The traffic generator could not reach the offered rate and the DUT missed no threshold:
    a bench fault, the numbers say nothing about the DUT."""

    def __init__(self, what: str) -> None:
        super().__init__(f"BENCH FAULT: the traffic generator could not reach the offered rate for {what}")


@dataclass(frozen=True)
class Measurement:
    scenario: str
    case: str
    median_mbps: float
    theory_mbps: float
    loss_pct: float | None = None
    latency_ms: float | None = None

    @property
    def efficiency_pct(self) -> float:
        return 100.0 * self.median_mbps / self.theory_mbps


def violations(m: Measurement, limits: Limits) -> list[str]:
    out = []
    theory = f"theoretical {m.theory_mbps:.2f} Mbit/s"
    if limits.min_mbps is not None and m.median_mbps < limits.min_mbps:
        out.append(
            f"median {m.median_mbps:.2f} Mbit/s < threshold {limits.min_mbps:.2f} Mbit/s "
            f"({theory}, measured {m.efficiency_pct:.1f} % of it)"
        )
    if limits.min_efficiency_pct is not None and m.efficiency_pct < limits.min_efficiency_pct:
        out.append(
            f"efficiency {m.efficiency_pct:.1f} % < threshold {limits.min_efficiency_pct:.1f} % "
            f"(median {m.median_mbps:.2f} Mbit/s of {theory})"
        )
    if limits.max_efficiency_pct is not None and m.efficiency_pct > limits.max_efficiency_pct:
        out.append(
            f"efficiency {m.efficiency_pct:.1f} % > upper limit {limits.max_efficiency_pct:.1f} % "
            f"(median {m.median_mbps:.2f} Mbit/s of {theory}: more than the construction allows)"
        )
    if limits.max_loss_pct is not None:
        if m.loss_pct is None:
            out.append("a loss threshold is set but the case measures no loss")
        elif m.loss_pct > limits.max_loss_pct:
            out.append(
                f"loss {m.loss_pct:.3f} % > threshold {limits.max_loss_pct:.3f} % (median {m.median_mbps:.2f} Mbit/s)"
            )
    if limits.max_latency_ms is not None:
        if m.latency_ms is None:
            out.append("a latency threshold is set but the case measures no latency")
        elif m.latency_ms > limits.max_latency_ms:
            out.append(f"latency {m.latency_ms:.3f} ms > threshold {limits.max_latency_ms:.3f} ms")
    return out


def assert_within(m: Measurement, limits: Limits) -> None:
    found = violations(m, limits)
    if found:
        raise AssertionError(f"{BELOW_THRESHOLD}: {m.scenario}/{m.case}: " + "; ".join(found))


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
