"""The PC side's iperf 3 (Debian `iperf3`), parsed from its JSON output (-J).

iperf 3 speaks its own protocol, so it drives peers that run iperf 3 (the thesis's Hub, a
second PC); the project's firmware speaks iperf 2. A client run reports both ends: the sender's
bytes and retransmits and the receiver's goodput, and for UDP the receiver's loss and jitter.
Every number goes through hil.numbers' checked conversion: a malformed one (NaN, Infinity - which
Python's json module takes -, a negative, a string) is iperf 3's, the bench's, fault: a
ToolOutputError (a BenchError) naming its place in the document.
"""

from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hil.config.sections import DEFAULT_TCP_CONGESTION
from hil.errors import BenchError
from hil.numbers import (
    BYTES,
    COUNT,
    IPERF3_TOOL,
    MBPS,
    MS,
    PERCENT,
    SECONDS,
    ToolOutputError,
    Unit,
    checked,
    checked_int,
    require,
)
from hil.plumbing.proc import ListeningServer
from hil.tools.watched_run import StopWhen, run_watched

IPERF3 = "iperf3"


@dataclass(frozen=True)
class Iperf3Result:
    sender_mbps: float
    receiver_mbps: float
    duration_s: float
    retransmits: int | None = None
    jitter_ms: float | None = None
    lost_packets: int | None = None
    packets: int | None = None
    lost_percent: float | None = None
    bytes: int | None = None  # received (the server stops counting at the test's end: a -n transfer's
    # last few tens of KB in flight are delivered but not counted)
    sent_bytes: int | None = None  # written by the sender (for TCP: all of it delivered when the test ends cleanly)


def json_document(text: str) -> dict:  # type: ignore[type-arg]
    """iperf 3's JSON document in its output. A program run on a host over SSH has its stderr
    joined to its stdout (a terminal): iperf 3's warnings ("UDP block size ... exceeds TCP MSS")
    then come before the document, which starts at the first line that is `{`. A document that is
    not a JSON object is a ToolOutputError (a BenchError)."""
    doc = _loads(text)
    if doc is None:
        lines = text.splitlines()
        start = next((i for i, line in enumerate(lines) if line.strip() == "{"), None)
        doc = _loads("\n".join(lines[start:])) if start is not None else None
    if doc is None:
        raise ToolOutputError(f"iperf3 printed no JSON: {text.strip()[:200] or 'no output'}")
    if not isinstance(doc, dict):
        raise ToolOutputError(f"iperf3 printed JSON that is not an object: {text.strip()[:200]}")
    return doc


def _loads(text: str) -> object | None:
    """The JSON value of text, or None when it is none (also for numbers too long for Python's
    int() and nesting too deep for its parser)."""
    try:
        return json.loads(text)  # type: ignore[no-any-return]
    except (ValueError, RecursionError):  # json.JSONDecodeError is a ValueError
        return None


def parse_json(text: str) -> Iperf3Result:
    """Parses iperf3 -J output of a client; an iperf3 `error` becomes a BenchError naming it, a
    missing summary or a malformed number a ToolOutputError (a BenchError) naming its place."""
    data = json_document(text)
    if "error" in data:
        raise BenchError(f"iperf3: {data['error']}")
    return _result(_object(data, "end", ""), _protocol(data) == "UDP", "end")


def parse_bidir_json(text: str) -> tuple[Iperf3Result, Iperf3Result]:
    """A --bidir client's JSON: (client -> server, server -> client), each with its receiver's view."""
    parse_json(text)  # the same errors as a one-way test
    data = json_document(text)
    end = _object(data, "end", "")
    udp = _protocol(data) == "UDP"
    reverse = {k.removesuffix("_bidir_reverse"): v for k, v in end.items() if k.endswith("_bidir_reverse")}
    if not reverse:
        raise BenchError("iperf3 JSON has no reverse direction (not a --bidir test)")
    return _result(end, udp, "end"), _result(reverse, udp, "end (*_bidir_reverse)")


def _protocol(data: dict) -> object:  # type: ignore[type-arg]
    start = data.get("start")
    test_start = start.get("test_start") if isinstance(start, dict) else None
    return test_start.get("protocol") if isinstance(test_start, dict) else None


def _object(parent: dict, key: str, path: str) -> dict:  # type: ignore[type-arg]
    """parent[key], which must be a JSON object (an absent `end` is an empty one)."""
    value = parent.get(key, {} if key == "end" else None)
    if not isinstance(value, dict):
        raise ToolOutputError(f"iperf3's JSON has no object {f'{path}.{key}' if path else key}")
    return value


def _number(d: dict, key: str, unit: Unit, path: str, scale: float = 1.0) -> float:  # type: ignore[type-arg]
    """A number iperf 3 always prints (absent: ToolOutputError)."""
    if key not in d:
        raise ToolOutputError(f"iperf3's JSON lacks {path}.{key}")
    return checked(d[key], unit, what=f"{path}.{key}", source=IPERF3_TOOL, scale=scale)


def _optional(d: dict, key: str, unit: Unit, path: str) -> float | None:  # type: ignore[type-arg]
    return None if d.get(key) is None else checked(d[key], unit, what=f"{path}.{key}", source=IPERF3_TOOL)


def _count(d: dict, key: str, unit: Unit, path: str) -> int | None:  # type: ignore[type-arg]
    return None if d.get(key) is None else checked_int(d[key], unit, what=f"{path}.{key}", source=IPERF3_TOOL)


def _result(end: dict, udp: bool, path: str) -> Iperf3Result:  # type: ignore[type-arg]
    if not udp and "sum_received" in end:  # TCP
        sent, recv = _object(end, "sum_sent", path), _object(end, "sum_received", path)
        sp, rp = f"{path}.sum_sent", f"{path}.sum_received"
        return Iperf3Result(
            sender_mbps=_number(sent, "bits_per_second", MBPS, sp, scale=1e-6),
            receiver_mbps=_number(recv, "bits_per_second", MBPS, rp, scale=1e-6),
            duration_s=_number(recv, "seconds", SECONDS, rp),
            retransmits=_count(sent, "retransmits", COUNT, sp),
            bytes=_count(recv, "bytes", BYTES, rp),
            sent_bytes=_count(sent, "bytes", BYTES, sp),
        )
    if "sum" in end:  # UDP: the receiver's summary (the client's carries the server's) has loss and jitter
        s = _object(end, "sum", path)
        sent = _object(end, "sum_sent", path) if "sum_sent" in end else s
        recv = _object(end, "sum_received", path) if "sum_received" in end else s
        sp = f"{path}.sum_sent" if sent is not s else f"{path}.sum"
        rp = f"{path}.sum_received" if recv is not s else f"{path}.sum"
        seconds = recv if "seconds" in recv else s
        lost, packets = _count(recv, "lost_packets", COUNT, rp), _count(recv, "packets", COUNT, rp)
        if lost is not None and packets is not None:
            require(lost <= packets, f"{rp}: {lost} of {packets} packets lost", source=IPERF3_TOOL)
        return Iperf3Result(
            sender_mbps=_number(sent, "bits_per_second", MBPS, sp, scale=1e-6),
            receiver_mbps=_number(recv, "bits_per_second", MBPS, rp, scale=1e-6),
            duration_s=_number(seconds, "seconds", SECONDS, rp) if "seconds" in seconds else 0.0,
            jitter_ms=_optional(recv, "jitter_ms", MS, rp),
            lost_packets=lost,
            packets=packets,
            lost_percent=_optional(recv, "lost_percent", PERCENT, rp),
            bytes=_count(recv, "bytes", BYTES, rp),
        )
    raise BenchError("iperf3 JSON has no end summary")


@dataclass(frozen=True)
class Iperf3ClientArgs:
    host: str
    port: int = 5201
    udp: bool = False
    duration_s: float = 10.0
    length: int | None = None
    bandwidth: str | None = None  # e.g. "95M" (iperf3: M = 10^6)
    reverse: bool = False
    bidir: bool = False
    window: str | None = None
    congestion: str | None = DEFAULT_TCP_CONGESTION  # TCP congestion control (-C); None: the host's default
    amount: str | None = None  # bytes to send (-n, e.g. "100M") instead of a duration
    mss: int | None = None  # TCP maximum segment size (-M)
    nodelay: bool = False  # TCP_NODELAY (-N): Nagle's algorithm off
    interval_s: float | None = None  # report every interval (-i; iperf 3 takes tenths of a second)

    def argv(self) -> list[str]:
        # iperf 3 counts -t in whole seconds (a fraction is cut to 0: no end), so a shorter test runs 1 s
        length = ["-n", self.amount] if self.amount else ["-t", str(max(1, math.ceil(self.duration_s)))]
        args = [IPERF3, "-c", self.host, "-p", str(self.port), "-J", *length]
        if self.udp:
            args += ["-u", "-b", self.bandwidth or "1M"]
        else:
            args += ["-C", self.congestion] if self.congestion else []
            args += ["-b", self.bandwidth] if self.bandwidth else []
        if self.length:
            args += ["-l", str(self.length)]
        if self.reverse:
            args.append("-R")
        if self.bidir:
            args.append("--bidir")
        if self.window:
            args += ["-w", self.window]
        if self.mss and not self.udp:
            args += ["-M", str(self.mss)]
        if self.nodelay and not self.udp:
            args.append("-N")
        if self.interval_s:
            args += ["-i", f"{self.interval_s:g}"]
        return args


def run_client(
    netns_prefix: list[str], args: Iperf3ClientArgs, timeout_s: float, stop_when: StopWhen | None = None
) -> tuple[Iperf3Result, str]:
    """Runs an iperf 3 client to completion (killed after timeout_s, or when `stop_when` says why)."""
    argv = [*netns_prefix, *args.argv()]
    try:
        proc = run_watched(argv, timeout_s, stop_when, what="the iperf3 client")
    except subprocess.TimeoutExpired:
        raise BenchError(f"iperf3 client did not finish within {timeout_s:g} s: {' '.join(argv)}") from None
    except FileNotFoundError:
        raise BenchError(f"{IPERF3} is not installed on the PC side (Debian package `iperf3`)") from None
    return parse_json(proc.stdout), proc.stdout


class Iperf3Server(ListeningServer):
    """An iperf3 server (one test, -1) in a namespace; always stopped on exit."""

    def __init__(self, netns_prefix: list[str], port: int, log_path: Path) -> None:
        argv = [*netns_prefix, IPERF3, "-s", "-1", "-p", str(port), "-J"]
        super().__init__(argv, netns_prefix, port, False, log_path, "iperf3 server (Debian package `iperf3`)")
