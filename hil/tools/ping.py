"""Ping output parsing (iputils ping on the PC, the firmware's console ping) and percentiles.

Every number goes through hil.numbers' checked conversion: a malformed one (`time=0.1.2 ms`) is
the DUT's fault in its console's output (DutError), the bench's in iputils' (ToolOutputError)."""

from __future__ import annotations

import math
import re
import subprocess
from dataclasses import dataclass

from hil.console.protocol import FinalLine
from hil.numbers import COUNT, DUT, MS, PING_TOOL, Source, ToolOutputError, checked, checked_int, quote, require

_NUM = r"[0-9]+(?:\.[0-9]+)?"
_TIME = re.compile(rf"\btime[=<]({_NUM}) ?ms\b", re.ASCII)
_TIME_FIELD = re.compile(r"\btime[=<]")  # a reply's round-trip time, well formed or not
_SUMMARY = re.compile(r"^([0-9]+) packets transmitted, ([0-9]+) (?:packets )?received\b", re.MULTILINE)
_RTT = re.compile(rf"min/avg/max/mdev = ({_NUM})/({_NUM})/({_NUM})/({_NUM}) ms\b")
_RTT_FIELD = re.compile(r"min/avg/max/mdev =")


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


def _rtts(lines: list[str], source: Source) -> tuple[float, ...]:
    """The round-trip time of every reply line; a time field that is not a well-formed number of
    ms is source's fault, quoting the line."""
    rtts = []
    for line in lines:
        if not _TIME_FIELD.search(line):
            continue
        m = _TIME.search(line)
        if m is None:
            raise source.error(f"{source.who} printed a reply whose time is not a number of ms: {quote(line)}")
        rtts.append(checked(m.group(1), MS, what="time", line=line, source=source))
    return tuple(rtts)


def parse_iputils(text: str) -> PingStats:
    """iputils ping's output; ToolOutputError (a BenchError, and a ValueError) when it has no
    summary or a malformed number."""
    m = _SUMMARY.search(text)
    if not m:
        raise ToolOutputError(f"no ping summary in: {text.strip()[-200:]}")
    line = m.group(0)
    sent = checked_int(m.group(1), COUNT, what="transmitted", line=line, source=PING_TOOL)
    received = checked_int(m.group(2), COUNT, what="received", line=line, source=PING_TOOL)
    require(received <= sent, f"{received} received of {sent} sent", line, PING_TOOL)
    rtts = _rtts(text.splitlines(), PING_TOOL)
    rtt = _RTT.search(text)
    if not rtt:
        if (bad := _RTT_FIELD.search(text)) is not None:
            bad_line = text[text.rfind("\n", 0, bad.start()) + 1 :].split("\n", 1)[0]
            raise ToolOutputError(f"{PING_TOOL.who} printed a malformed rtt summary: {quote(bad_line)}")
        return PingStats(sent, received, rtts)
    names = ("min", "avg", "max", "mdev")
    mn, avg, mx, mdev = (
        checked(rtt.group(i + 1), MS, what=n, line=rtt.group(0), source=PING_TOOL) for i, n in enumerate(names)
    )
    require(mn <= avg <= mx, f"min {mn:g} / avg {avg:g} / max {mx:g} ms", rtt.group(0), PING_TOOL)
    return PingStats(sent, received, rtts, avg, mn, mx, mdev)


def parse_console(lines: list[str], final: FinalLine) -> PingStats:
    """The firmware's `ping`: per-reply times from its lines (none with -q), the rest from its
    final line; DutError for a malformed or impossible number."""
    rtts = _rtts(lines, DUT)
    sent, received = final.get_int("sent"), final.get_int("received")
    require(received <= sent, f"{received} received of {sent} sent", final.text)
    summary = {f"{k}_ms": final.get_float(f"{k}_ms") if received and f"{k}_ms" in final.fields else None
               for k in ("avg", "min", "max", "mdev")}  # fmt: skip
    mn, avg, mx = summary["min_ms"], summary["avg_ms"], summary["max_ms"]
    if mn is not None and avg is not None and mx is not None:
        require(mn <= avg <= mx, f"min {mn:g} / avg {avg:g} / max {mx:g} ms", final.text)
    return PingStats(sent, received, rtts, **summary)


def answers_ping(netns_prefix: list[str], ip: str, count: int = 3) -> bool:
    """A host (a namespace's prefix) reaches `ip`: one answer of `count` pings is enough. How a DUT
    whose console does not say its address is found at the bench file's, and how both ends learn
    each other's link address before a measurement."""
    argv = [*netns_prefix, "ping", "-n", "-c", str(count), "-i", "0.2", "-W", "1", ip]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
