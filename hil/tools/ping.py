"""Ping output parsing (iputils ping on the PC, the firmware's console ping) and percentiles."""

from __future__ import annotations

import math
import re
import subprocess
from dataclasses import dataclass

from hil.console.protocol import FinalLine

_TIME = re.compile(r"\btime[=<]([0-9.]+) ?ms")
_SUMMARY = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received")
_RTT = re.compile(r"rtt min/avg/max/mdev = ([0-9.]+)/([0-9.]+)/([0-9.]+)/([0-9.]+) ms")


@dataclass(frozen=True)
class PingStats:
    sent: int
    received: int
    rtts_ms: tuple[float, ...]
    avg_ms: float | None = None  # from the summary (all that a flood prints besides min/max/mdev)
    min_ms: float | None = None
    max_ms: float | None = None
    mdev_ms: float | None = None  # standard deviation of the round-trip times, as ping(8) gives it

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
    if not rtt:
        return PingStats(int(m.group(1)), int(m.group(2)), rtts)
    mn, avg, mx, mdev = (float(rtt.group(i)) for i in range(1, 5))
    return PingStats(int(m.group(1)), int(m.group(2)), rtts, avg, mn, mx, mdev)


def parse_console(lines: list[str], final: FinalLine) -> PingStats:
    """The firmware's `ping`: per-reply times from its lines (none with -q), the rest from its
    final line."""
    rtts = tuple(float(x) for line in lines for x in _TIME.findall(line))
    received = final.get_int("received")
    summary = {f"{k}_ms": final.get_float(f"{k}_ms") if received and f"{k}_ms" in final.fields else None
               for k in ("avg", "min", "max", "mdev")}  # fmt: skip
    return PingStats(final.get_int("sent"), received, rtts, **summary)


def answers_ping(netns_prefix: list[str], ip: str, count: int = 3) -> bool:
    """A host (a namespace's prefix) reaches `ip`: one answer of `count` pings is enough. How a DUT
    whose console does not say its address is found at the bench file's, and how both ends learn
    each other's link address before a measurement."""
    argv = [*netns_prefix, "ping", "-n", "-c", str(count), "-i", "0.2", "-W", "1", ip]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
