"""The PC side's iperf 2 (Debian `iperf`, 2.1.x): client runs and servers, parsed from CSV (-y C).
Every number goes through hil.numbers' checked conversion: a malformed one is iperf's (the bench's)
fault, a ToolOutputError (a BenchError), not the DUT's.

CSV records: ``time,src_ip,src_port,dst_ip,dst_port,id,interval,bytes,bits_per_second`` and, for
UDP, ``,jitter_ms,lost,total,loss_pct,out_of_order``. A UDP client's own record has total = -1
(the server's view comes from the server).
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from hil.config.sections import DEFAULT_TCP_CONGESTION
from hil.errors import BenchError
from hil.numbers import (
    BITS_PER_S,
    BYTES,
    COUNT,
    IPERF2_TOOL,
    MS,
    SECONDS,
    ToolOutputError,
    Unit,
    checked,
    checked_int,
    quote,
    require,
)
from hil.plumbing.proc import ListeningServer
from hil.tools.watched_run import StopWhen, run_watched

IPERF2 = "iperf"
QUIET_S = 0.02  # a server's log read as finished once it has not grown for this long


@dataclass(frozen=True)
class Iperf2Record:
    interval_start_s: float
    interval_end_s: float
    bytes: int
    bits_per_second: float
    jitter_ms: float | None = None
    lost: int | None = None
    total: int | None = None
    out_of_order: int | None = None

    @property
    def mbps(self) -> float:
        return self.bits_per_second / 1e6

    @property
    def duration_s(self) -> float:
        return self.interval_end_s - self.interval_start_s

    @property
    def loss_pct(self) -> float | None:
        if self.lost is None or not self.total or self.total < 0:
            return None
        return 100.0 * self.lost / self.total


# what a jitter figure may read before it is garbage: as MS, and beyond it iperf 2's start-up value
JITTER = Unit("ms", 0.0, 1e13)
_INTERVAL = re.compile(r"([0-9]+(?:\.[0-9]+)?)-([0-9]+(?:\.[0-9]+)?)")


def _record(line: str, parts: list[str]) -> Iperf2Record:
    """One CSV record; ToolOutputError (a bench fault) quoting the line for a malformed,
    non-finite, implausible or impossible number."""
    m = _INTERVAL.fullmatch(parts[6])
    if m is None:
        raise ToolOutputError(f"{IPERF2_TOOL.who} printed a malformed interval {parts[6]!r} in {quote(line)}")
    start, end = (checked(m.group(i), SECONDS, what="interval", line=line, source=IPERF2_TOOL) for i in (1, 2))
    require(end >= start, f"an interval that ends before it starts ({parts[6]} s)", line, IPERF2_TOOL)
    size = checked_int(parts[7], BYTES, what="bytes", line=line, source=IPERF2_TOOL)
    bps = checked(parts[8], BITS_PER_S, what="bits_per_second", line=line, source=IPERF2_TOOL)
    if len(parts) == 9:
        return Iperf2Record(start, end, size, bps)
    jitter: float | None = checked(parts[9], JITTER, what="jitter_ms", line=line, source=IPERF2_TOOL)
    if jitter is not None and jitter > MS.high:
        # iperf 2's server starts its jitter at the first datagram's transit time, sender's clock to
        # its own: a sender whose clock is not the PC's (a DUT's iperf counts from its boot) makes it
        # start at the clocks' difference, decaying by 15/16 a datagram (2e8 ms after 98): it says
        # nothing about the path, so it is not a figure (a limit on it then fails as not measured)
        jitter = None
    if parts[11].strip() == "-1" and parts[10].strip() in ("0", "-1"):  # a UDP client's own record: no server view
        lost, total = int(parts[10]), -1
    else:
        lost = checked_int(parts[10], COUNT, what="lost", line=line, source=IPERF2_TOOL)
        total = checked_int(parts[11], COUNT, what="total", line=line, source=IPERF2_TOOL)
        require(lost <= total, f"{lost} of {total} datagrams lost", line, IPERF2_TOOL)
    ooo = checked_int(parts[13], COUNT, what="out_of_order", line=line, source=IPERF2_TOOL)
    return Iperf2Record(start, end, size, bps, jitter_ms=jitter, lost=lost, total=total, out_of_order=ooo)


def parse_csv_records(text: str) -> list[Iperf2Record]:
    """Parses every iperf 2 CSV record in text; other lines (warnings) are ignored. A record
    with a malformed number is a ToolOutputError (a BenchError) quoting it."""
    records = []
    for line in text.splitlines():
        parts = line.strip().split(",")
        if len(parts) not in (9, 14) or "-" not in parts[6]:
            continue
        records.append(_record(line.strip(), parts))
    return records


def summary_record(text: str) -> Iperf2Record:
    """The whole-test record: the one spanning the longest interval (the last one for ties)."""
    records = parse_csv_records(text)
    if not records:
        lines = " | ".join(text.strip().splitlines()[-3:]) or "no output"
        raise BenchError(f"iperf printed no result ({lines})")
    return max(reversed(records), key=lambda r: (r.interval_end_s - r.interval_start_s, r.bytes))


@dataclass(frozen=True)
class Iperf2ClientArgs:
    host: str
    port: int = 5001
    udp: bool = False
    duration_s: float = 10.0
    amount: str | None = None  # bytes with iperf suffix, instead of a duration
    length: int | None = None
    bandwidth: str | None = None  # e.g. "95m" (decimal); UDP always gets one
    window: str | None = None
    mss: int | None = None
    congestion: str | None = DEFAULT_TCP_CONGESTION  # TCP congestion control (-Z); None: the host's default
    udp_fin: bool = True  # False: --no-udp-fin, for a server that sends no report (Espressif's iperf)
    nodelay: bool = False  # TCP_NODELAY (-N): Nagle's algorithm off

    def argv(self) -> list[str]:
        args = [IPERF2, "-c", self.host, "-p", str(self.port), "-y", "C"]
        if self.udp:
            args += ["-u", "-b", self.bandwidth or "1m"]
            args += [] if self.udp_fin else ["--no-udp-fin"]
        else:
            args += ["-Z", self.congestion] if self.congestion else []
            args += ["-b", self.bandwidth] if self.bandwidth else []
        args += ["-n", self.amount] if self.amount else ["-t", f"{self.duration_s:g}"]
        if self.length:
            args += ["-l", str(self.length)]
        if self.window:
            args += ["-w", self.window]
        if self.mss:
            args += ["-M", str(self.mss)]
        if self.nodelay and not self.udp:
            args.append("-N")
        return args


@dataclass
class ClientRun:
    record: Iperf2Record
    raw: str
    argv: list[str]


def run_client(
    netns_prefix: list[str], args: Iperf2ClientArgs, timeout_s: float, stop_when: StopWhen | None = None
) -> ClientRun:
    """Runs an iperf 2 client to completion (killed after timeout_s, or when `stop_when` says why)."""
    argv = [*netns_prefix, *args.argv()]
    try:
        proc = run_watched(argv, timeout_s, stop_when, what="the iperf client")
    except subprocess.TimeoutExpired as exc:
        raise BenchError(f"iperf client did not finish within {timeout_s:g} s: {' '.join(argv)}") from exc
    except FileNotFoundError as exc:
        raise BenchError(f"{IPERF2} is not installed on the PC side (Debian package `iperf`)") from exc
    raw = proc.stdout + proc.stderr
    refused = re.search(r"Attempt to set '([^']*)' congestion control failed: (.*)", raw)
    if refused:  # iperf goes on with the host's default: those figures would not be the bench's
        raise BenchError(
            f"the PC's TCP congestion control {refused.group(1)!r} could not be set ({refused.group(2).strip()}): "
            "run as root, or set pc.tcp_congestion in the bench file to one of "
            "net.ipv4.tcp_available_congestion_control (null: the host's default)"
        )
    return ClientRun(summary_record(raw), raw, argv)


def _complete_lines(text: str) -> str:
    """The lines of a log being written that are complete: a record the server is still writing,
    cut short, is not read (its last number would be read short, or malformed)."""
    return text[: text.rfind("\n") + 1]


class Iperf2Server(ListeningServer):
    """An iperf 2 server in a namespace, stopped (and killed if need be) on exit."""

    def __init__(
        self,
        netns_prefix: list[str],
        udp: bool,
        port: int,
        log_path: Path,
        bind: str | None = None,
        extra: list[str] | None = None,
    ) -> None:
        argv = [*netns_prefix, IPERF2, "-s", "-p", str(port), "-y", "C", *(extra or [])]
        argv += (["-u"] if udp else []) + (["-B", bind] if bind else [])
        super().__init__(argv, netns_prefix, port, udp, log_path, "iperf 2 server (Debian package `iperf`)")

    def wait_record(self, timeout_s: float) -> Iperf2Record:
        """Waits for the server to print the record of a finished test."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text = _complete_lines(self.output())
            if parse_csv_records(text):
                if self.udp:  # a UDP server may print interval and summary records together: read all
                    time.sleep(QUIET_S)
                    while (later := _complete_lines(self.output())) != text and time.monotonic() < deadline:
                        text = later
                        time.sleep(QUIET_S)
                record = summary_record(text)
                self.finished = True
                return record
            time.sleep(0.02)
        raise BenchError(f"iperf server reported no finished test within {timeout_s:g} s")
