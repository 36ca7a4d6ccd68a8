"""Ping output parsing (iputils ping on the PC, the firmware's console ping) and percentiles."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_TIME = re.compile(r"\btime[=<]([0-9.]+) ?ms")
_SUMMARY = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received")
_RTT = re.compile(r"rtt min/avg/max/mdev = ([0-9.]+)/([0-9.]+)/([0-9.]+)/([0-9.]+) ms")


@dataclass(frozen=True)
class PingStats:
    sent: int
    received: int
    rtts_ms: tuple[float, ...]
    avg_ms: float | None = None  # from the summary when per-reply times are not printed (flood)

    @property
    def loss_pct(self) -> float:
        return 100.0 * (self.sent - self.received) / self.sent if self.sent else 100.0


def percentile(values: list[float] | tuple[float, ...], pct: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def parse_iputils(text: str) -> PingStats:
    m = _SUMMARY.search(text)
    if not m:
        raise ValueError(f"no ping summary in: {text.strip()[-200:]}")
    rtt = _RTT.search(text)
    rtts = tuple(float(x) for x in _TIME.findall(text))
    return PingStats(int(m.group(1)), int(m.group(2)), rtts, float(rtt.group(2)) if rtt else None)


def parse_console(lines: list[str], sent: int, received: int) -> PingStats:
    rtts = tuple(float(x) for line in lines for x in _TIME.findall(line))
    return PingStats(sent, received, rtts, sum(rtts) / len(rtts) if rtts else None)
