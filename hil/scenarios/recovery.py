"""Reconnection (the thesis's undock/redock): a link beside a DUT in the path goes down and up
while a TCP stream and a fast ping run through it; how long until ping answers again and until
the stream is back at its rate. Parsing and arithmetic here; the case is hil/scenarios/families/reconnect.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hil.numbers import IPERF3_TOOL, MBPS, SECONDS, checked, require

# `ping -D`: "[1732431234.123456] 64 bytes from 10.77.0.3: icmp_seq=12 ttl=64 time=0.1 ms"
_REPLY = re.compile(r"^\[(\d+\.\d+)\] \d+ bytes from .*icmp_seq=(\d+)")


def reply_times(ping_output: str) -> list[float]:
    """The wall-clock time of every echo reply in `ping -D` output, in order."""
    out = []
    for line in ping_output.splitlines():
        m = _REPLY.match(line.strip())
        if m:
            out.append(float(m.group(1)))
    return out


def first_after(times: Sequence[float], moment: float) -> float | None:
    """The first time at or after `moment` (None: none)."""
    return next((t for t in sorted(times) if t >= moment), None)


@dataclass(frozen=True)
class Interval:
    start: float  # wall clock
    end: float
    mbps: float


def intervals_from_iperf3(data: dict, started_at: float) -> list[Interval]:  # type: ignore[type-arg]
    """iperf 3's per-interval sums (-i) placed on the wall clock: `started_at` is when the client
    was launched (its connection set-up, a few ms on the bench, is the error of the placement)."""
    out = []
    intervals = data.get("intervals")
    for iv in intervals if isinstance(intervals, list) else []:
        s = iv.get("sum") if isinstance(iv, dict) else None
        if isinstance(s, dict) and "start" in s and "end" in s:
            line = f"iperf3 JSON interval {s}"
            start, end = (checked(s[k], SECONDS, what=k, line=line, source=IPERF3_TOOL) for k in ("start", "end"))
            require(start <= end, "an interval that ends before it starts", line, IPERF3_TOOL)
            rate = checked(s.get("bits_per_second", 0), MBPS, what="bits_per_second", line=line, source=IPERF3_TOOL,
                           scale=1e-6)  # fmt: skip
            out.append(Interval(started_at + start, started_at + end, rate))
    return out


def back_at_rate(intervals: Sequence[Interval], moment: float, mbps: float) -> float | None:
    """When the stream was first back at `mbps` after `moment`: the end of the first interval that
    starts at or after it and carries at least that rate (None: never within the test)."""
    return next((iv.end for iv in intervals if iv.start >= moment and iv.mbps >= mbps), None)
