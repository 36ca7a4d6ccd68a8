"""The PC side's iperf 3 (Debian `iperf3`), parsed from its JSON output (-J).

iperf 3 speaks its own protocol, so it drives peers that run iperf 3 (the thesis's Hub, a
second PC); the project's firmware speaks iperf 2. A client run reports both ends: the sender's
bytes and retransmits and the receiver's goodput, and for UDP the receiver's loss and jitter.
"""

from __future__ import annotations

import json
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hil.bench.proc import ListeningServer
from hil.config.sections import DEFAULT_TCP_CONGESTION
from hil.errors import BenchError
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
    then come before the document, which starts at the first line that is `{`."""
    try:
        return json.loads(text)  # type: ignore[no-any-return]
    except json.JSONDecodeError:
        pass
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "{"), None)
    if start is not None:
        try:
            return json.loads("\n".join(lines[start:]))  # type: ignore[no-any-return]
        except json.JSONDecodeError:
            pass
    raise BenchError(f"iperf3 printed no JSON: {text.strip()[:200] or 'no output'}")


def parse_json(text: str) -> Iperf3Result:
    """Parses iperf3 -J output of a client; an iperf3 `error` becomes a BenchError naming it."""
    data = json_document(text)
    if "error" in data:
        raise BenchError(f"iperf3: {data['error']}")
    return _result(data.get("end", {}), data.get("start", {}).get("test_start", {}).get("protocol") == "UDP")


def parse_bidir_json(text: str) -> tuple[Iperf3Result, Iperf3Result]:
    """A --bidir client's JSON: (client -> server, server -> client), each with its receiver's view."""
    parse_json(text)  # the same errors as a one-way test
    data = json_document(text)
    end = data.get("end", {})
    udp = data.get("start", {}).get("test_start", {}).get("protocol") == "UDP"
    reverse = {k.removesuffix("_bidir_reverse"): v for k, v in end.items() if k.endswith("_bidir_reverse")}
    if not reverse:
        raise BenchError("iperf3 JSON has no reverse direction (not a --bidir test)")
    return _result(end, udp), _result(reverse, udp)


def _result(end: dict, udp: bool) -> Iperf3Result:  # type: ignore[type-arg]
    if not udp and "sum_received" in end:  # TCP
        sent, recv = end["sum_sent"], end["sum_received"]
        return Iperf3Result(
            sender_mbps=sent["bits_per_second"] / 1e6,
            receiver_mbps=recv["bits_per_second"] / 1e6,
            duration_s=recv["seconds"],
            retransmits=sent.get("retransmits"),
            bytes=recv.get("bytes"),
            sent_bytes=sent.get("bytes"),
        )
    if "sum" in end:  # UDP: the receiver's summary (the client's carries the server's) has loss and jitter
        s = end["sum"]
        recv = end.get("sum_received", s)
        return Iperf3Result(
            sender_mbps=end.get("sum_sent", s)["bits_per_second"] / 1e6,
            receiver_mbps=recv["bits_per_second"] / 1e6,
            duration_s=recv.get("seconds", s.get("seconds", 0.0)),
            jitter_ms=recv.get("jitter_ms"),
            lost_packets=recv.get("lost_packets"),
            packets=recv.get("packets"),
            lost_percent=recv.get("lost_percent"),
            bytes=recv.get("bytes"),
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
