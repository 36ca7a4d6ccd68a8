"""The one ping runner of the suite (iputils ping on a bench host: `ping_argv`, `run_ping`,
`answers_ping`, `check_forwarding`), its output parsing (iputils, the firmware's console ping) and
percentiles.

Every number goes through hil.numbers' checked conversion: a malformed one (`time=0.1.2 ms`) is
the DUT's fault in its console's output (DutError), the bench's in iputils' (ToolOutputError)."""

from __future__ import annotations

import math
import re
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Self

from hil.console.protocol import FinalLine
from hil.errors import BenchError, DutError
from hil.numbers import COUNT, DUT, MS, PING_TOOL, Source, ToolOutputError, checked, checked_int, quote, require
from hil.plumbing.proc import die_with_parent, interrupt

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


def ping_argv(
    netns_prefix: list[str], target: str, *, count: int | None = None, interval_s: float | None = 0.2,
    wait_s: float = 1, deadline_s: float | None = None, size: int | None = None, flood: bool = False,
    timestamps: bool = False,
) -> list[str]:  # fmt: skip
    """iputils ping from a bench host (a namespace's or an SSH session's prefix): numeric output,
    `count` requests (or until `deadline_s`), every `interval_s` (a flood: on each reply), each
    waiting `wait_s` for its reply; `size` bytes of payload; `timestamps`: each line with its
    wall-clock time (-D)."""
    argv = [*netns_prefix, "ping", "-n"]
    if timestamps:
        argv.append("-D")
    if flood:
        argv.append("-f")
    elif interval_s is not None:
        argv += ["-i", f"{interval_s:g}"]
    if count is not None:
        argv += ["-c", str(count)]
    if size is not None:
        argv += ["-s", str(size)]
    if deadline_s is not None:
        argv += ["-w", f"{deadline_s:g}"]
    if not flood:
        argv += ["-W", f"{wait_s:g}"]
    return [*argv, target]


def run_ping(argv: list[str], timeout_s: float) -> tuple[PingStats, str]:
    """Runs a ping (`ping_argv`) to its end: its statistics and its output with the command line.
    A ping that does not end or prints no summary is the bench's fault."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise BenchError(f"ping did not finish within {timeout_s:g} s: {' '.join(argv)}") from None
    text = proc.stdout + proc.stderr
    try:
        return parse_iputils(text), f"$ {' '.join(argv)}\n{text}"
    except ValueError as exc:
        raise BenchError(f"ping failed: {' '.join(argv)}: {exc}") from None


REACH_WITHIN_S = 2.0  # how long a reachability check offers its pings (one every 0.2 s) for one answer


def reach_argv(netns_prefix: list[str], ip: str, within_s: float = REACH_WITHIN_S) -> list[str]:
    """A ping that ends at the first answer, or after `within_s` of requests without one: exit code
    0 when `ip` answered (the three pings of 0.2 s each this replaced took 0.4 s to say yes)."""
    return ping_argv(netns_prefix, ip, count=1, deadline_s=within_s)


def answers_ping(netns_prefix: list[str], ip: str, within_s: float = REACH_WITHIN_S) -> bool:
    """A host (a namespace's prefix) reaches `ip`: one answer is enough. How a DUT whose console
    does not say its address is found at the bench file's, and how both ends learn each other's
    link address before a measurement."""
    argv = reach_argv(netns_prefix, ip, within_s)
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def check_forwarding(netns_prefix: list[str], peer_ip: str) -> None:
    """An in-path DUT's health from the traffic alone: the PC reaches the peer through it. A DUT
    that does not forward is a DUT fault (DutError naming the last line ping printed)."""
    argv = reach_argv(netns_prefix, peer_ip)
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except subprocess.TimeoutExpired:
        raise BenchError(f"ping did not finish within 30 s: {' '.join(argv)}") from None
    if out.returncode != 0:
        last = (out.stdout.strip().splitlines() or ["no output"])[-1]
        raise DutError(
            f"the DUT does not forward: the PC's pings to peer {peer_ip} got no reply in {REACH_WITHIN_S:g} s ({last})"
        )


PROBE_INTERVAL_S = 0.05  # 20 round trips a second: 84-byte requests, nothing beside a measured stream
PROBE_GRACE_S = 60.0  # a probe ends itself this long after its expected end (ping -w), whatever happens


class BackgroundPing:
    """A ping running beside a measurement (latency under load, RFC 6349's RTT during a transfer):
    started on entry from a bench host towards `target`, one request every `interval_s`, stopped on
    exit with SIGINT (iputils then prints its summary). It dies with the suite's process and ends
    itself `expected_s` + PROBE_GRACE_S after its start in any case (ping -w).
    `stats()` gives what it saw, `text` its output with the command line."""

    def __init__(self, netns_prefix: list[str], target: str, expected_s: float,
                 interval_s: float = PROBE_INTERVAL_S) -> None:  # fmt: skip
        deadline = math.ceil(expected_s + PROBE_GRACE_S)  # ping -w takes whole seconds
        self.argv = ping_argv(netns_prefix, target, interval_s=interval_s, deadline_s=deadline)
        self.text = ""
        self._proc: subprocess.Popen[bytes] | None = None
        # a file, not a pipe: nobody reads while it runs, and a pipe's 64 KB would stop a long probe
        self._out = tempfile.TemporaryFile()  # noqa: SIM115 (closed in __exit__)

    def __enter__(self) -> Self:
        try:
            self._proc = subprocess.Popen(self.argv, stdout=self._out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)  # fmt: skip
        except OSError as exc:
            self._out.close()
            raise BenchError(f"cannot start the RTT probe `{' '.join(self.argv)}`: {exc}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is None:
            return
        interrupt(proc)
        with self._out:
            self._out.seek(0)
            out = self._out.read().decode(errors="replace")
        self.text = f"$ {' '.join(self.argv)}\n{out}"

    def stats(self) -> PingStats:
        """What the probe saw; ToolOutputError (a bench fault) when ping printed no summary."""
        return parse_iputils(self.text)
