"""Traffic endpoints: the places a flow starts and ends, behind one interface.

A host endpoint is a machine of the bench (the PC's namespace, later a peer host): it runs iperf 2
or iperf 3 servers and clients. A DUT-console endpoint drives the DUT's own iperf through its
console (today's dialect: the project firmware's `iperf` command and RESULT lines). `run_flow`
sends a flow from one endpoint to another and returns both sides' numbers, the receiver's goodput
first; it never asks what sits behind an endpoint, only which traffic generators both speak.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from hil.config.sections import DEFAULT_TCP_CONGESTION
from hil.console.driver import ConsoleDriver
from hil.errors import BenchError, DutError
from hil.numbers import BYTES, COUNT, IPERF3_TOOL, US, Unit, checked, require
from hil.step_clock import timed
from hil.tools.iperf2 import Iperf2ClientArgs, Iperf2Server
from hil.tools.iperf2 import run_client as run_iperf2_client
from hil.tools.iperf3 import Iperf3ClientArgs, Iperf3Server, json_document, parse_json
from hil.tools.iperf3 import run_client as run_iperf3_client
from hil.tools.watched_run import StopWhen
from hil.traffic.overdue import either, silent_when_overdue

Generator = Literal["iperf2", "iperf3"]

# The PC's UDP servers ask for this receive buffer (iperf -w; the kernel caps it at
# net.core.rmem_max): at the default 208 KB a PC server descheduled for 18 ms on a busy host drops
# datagrams of a 95 Mbit/s stream in its own socket, which would count as the DUT's loss.
HOST_UDP_RCVBUF = "4M"


@dataclass(frozen=True)
class FlowSpec:
    """What flows, whichever endpoints send and receive it."""

    proto: Literal["tcp", "udp"]
    duration_s: float  # with `amount`: the expected duration (sets the timeouts)
    port: int = 5001
    length: int | None = None
    rate_mbps: float | None = None  # required for UDP
    amount: str | None = None  # bytes to transfer (iperf -n) instead of a duration
    window: str | None = None  # a host endpoint's socket buffer (iperf -w)
    mss: int | None = None  # a host endpoint's TCP_MAXSEG (iperf -M)
    nodelay: bool = False  # the TCP sender's Nagle off (iperf -N)
    udp_fin: bool = True  # False: the receiver answers no UDP FIN (the sender does not wait ~2.5 s for it)

    def rate_arg(self) -> str | None:
        """iperf's -b with lowercase (decimal) suffix: k = 1000 bit/s."""
        return f"{round(self.rate_mbps * 1000)}k" if self.rate_mbps else None

    @property
    def timeout_s(self) -> float:
        return self.duration_s * 2 + 30


@dataclass
class ReceiverReport:
    mbps: float
    bytes: int | None = None
    duration_s: float | None = None
    lost: int | None = None  # UDP
    datagrams: int | None = None
    jitter_ms: float | None = None
    socket_drops: int = 0  # datagrams the receiving host's own socket dropped (not the path's loss)
    raw: dict[str, str] = field(default_factory=dict)
    details: dict[str, float] = field(default_factory=dict)
    # a stock firmware's TCP server prints a rate sampled per interval: the PC client's figure for
    # the bytes TCP delivered is the measurement, the DUT's goes to details (dut_reported_mbps)
    sender_is_reference: bool = False


@dataclass
class SenderReport:
    mbps: float
    bytes: int | None = None  # bytes the sender wrote (iperf 3)
    raw: dict[str, str] = field(default_factory=dict)
    details: dict[str, float] = field(default_factory=dict)  # iperf 3: retransmits, cwnd, CPU
    receiver: ReceiverReport | None = None  # iperf 3's client also reports the receiver's side


class Receiving(Protocol):
    """A receiver started for one flow."""

    def report(self, timeout_s: float) -> ReceiverReport: ...


class Endpoint(Protocol):
    name: str  # as the report names it: "PC", "DUT", "peer"
    ip: str
    generators: tuple[Generator, ...]  # the traffic generators it speaks
    answers_udp_fin: bool  # its UDP server answers the client's FIN with a report
    is_dut: bool  # the DUT itself: a shortfall of its sender is its own (hil.bench_faults)

    def receive(self, flow: FlowSpec, generator: Generator) -> AbstractContextManager[Receiving]: ...
    def send(self, flow: FlowSpec, to: str, generator: Generator) -> SenderReport: ...
    def abort(self) -> None:
        """Stops whatever this endpoint still runs for a flow (after the other side failed)."""
        ...


def common_generator(sender: Endpoint, receiver: Endpoint, wanted: Generator | None = None) -> Generator:
    """The generator both endpoints speak (`wanted` if given); one clear error when there is none."""
    both = [g for g in sender.generators if g in receiver.generators]
    if wanted is not None:
        if wanted not in both:
            raise BenchError(
                f"{sender.name} ({', '.join(sender.generators)}) and {receiver.name} "
                f"({', '.join(receiver.generators)}) do not both speak {wanted}"
            )
        return wanted
    if not both:
        raise BenchError(f"{sender.name} and {receiver.name} speak no common traffic generator")
    return both[0]


# --- a host of the bench ---------------------------------------------------------------------
def read_snmp(netns_prefix: list[str]) -> str:
    """A host's (a namespace's, an SSH session's) /proc/net/snmp; "" when it cannot be read."""
    try:
        return subprocess.run([*netns_prefix, "cat", "/proc/net/snmp"], capture_output=True, text=True,
                              timeout=10, check=False).stdout  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return ""


def snmp_counters(snmp: str, protocol: str, names: tuple[str, ...]) -> dict[str, int] | None:
    """`names` of /proc/net/snmp's `protocol` row pair (e.g. "Tcp"), None when absent or not numbers."""
    rows = [line.split() for line in snmp.splitlines() if line.startswith(f"{protocol}:")]
    if len(rows) < 2 or len(rows[0]) != len(rows[1]):
        return None
    named = dict(zip(rows[0], rows[1], strict=True))
    try:
        return {k: int(named[k]) for k in names}
    except (KeyError, ValueError):
        return None


def udp_receive_buffer_errors(netns_prefix: list[str]) -> int:
    """The namespace's count of UDP datagrams dropped for a full socket receive buffer
    (/proc/net/snmp Udp RcvbufErrors); 0 when it cannot be read."""
    return parse_udp_rcvbuf_errors(read_snmp(netns_prefix))


def tcp_segment_counters(netns_prefix: list[str]) -> dict[str, int] | None:
    """The host's TCP segment counters from /proc/net/snmp: OutSegs (sent, retransmissions
    excluded) and RetransSegs (sent again); None when they cannot be read. RFC 6349's TCP
    Efficiency of a host sender comes from their change over a transfer."""
    return parse_tcp_segments(read_snmp(netns_prefix))


def parse_tcp_segments(snmp: str) -> dict[str, int] | None:
    """OutSegs and RetransSegs from /proc/net/snmp's text (None when absent or not numbers)."""
    return snmp_counters(snmp, "Tcp", ("OutSegs", "RetransSegs"))


def parse_udp_rcvbuf_errors(snmp: str) -> int:
    """Udp RcvbufErrors from /proc/net/snmp's text (0 when absent)."""
    found = snmp_counters(snmp, "Udp", ("RcvbufErrors",))
    return found["RcvbufErrors"] if found else 0


# iperf 3's CPU load: user + system time over the test's, of all its host's cores together
CPU_PERCENT = Unit("%", 0.0, 100.0 * 1024)


def iperf3_details(data: dict) -> dict[str, float]:  # type: ignore[type-arg]
    """What iperf 3's JSON adds to the numbers: retransmits, the largest congestion window and
    smoothed RTT seen, both hosts' CPU load; each checked (hil.numbers: iperf 3 on the bench
    printing garbage is a bench fault, not the DUT's)."""

    def num(value: object, unit: Unit, what: str) -> float:
        return checked(value, unit, what=what, line=f"iperf3 JSON {what}", source=IPERF3_TOOL)

    end = data.get("end") if isinstance(data.get("end"), dict) else {}
    out: dict[str, float] = {}
    sent = end.get("sum_sent") if isinstance(end.get("sum_sent"), dict) else {}
    if sent.get("retransmits") is not None:
        out["retransmits"] = num(sent["retransmits"], COUNT, "retransmits")
    streams = [s for i in _dicts(data.get("intervals")) for s in _dicts(i.get("streams"))]
    cwnd = [num(s["snd_cwnd"], BYTES, "snd_cwnd") for s in streams if "snd_cwnd" in s]
    if cwnd:
        out["max_cwnd_bytes"] = max(cwnd)
    senders = [s.get("sender") for s in _dicts(end.get("streams"))]
    rtt = [num(s["max_rtt"], US, "max_rtt") for s in senders if isinstance(s, dict) and "max_rtt" in s]
    if rtt:
        out["max_rtt_ms"] = max(rtt) / 1000.0
    mean = [num(s["mean_rtt"], US, "mean_rtt") for s in senders if isinstance(s, dict) and "mean_rtt" in s]
    if mean:
        out["mean_rtt_ms"] = round(sum(mean) / len(mean) / 1000.0, 4)
    cpu = end.get("cpu_utilization_percent") if isinstance(end.get("cpu_utilization_percent"), dict) else {}
    for key, name in (("host_total", "cpu_local_pct"), ("remote_total", "cpu_remote_pct")):
        if key in cpu:
            out[name] = round(num(cpu[key], CPU_PERCENT, key), 2)
    return out


def _dicts(value: object) -> list[dict]:  # type: ignore[type-arg]
    """The mappings of a JSON list (none when it is not a list)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


@dataclass
class _Iperf2HostReceiving:
    host: HostEndpoint
    server: Iperf2Server
    udp: bool
    drops_before: int

    def report(self, timeout_s: float) -> ReceiverReport:
        rec = self.server.wait_record(timeout_s=timeout_s)
        out = ReceiverReport(rec.mbps, bytes=rec.bytes, duration_s=rec.duration_s)
        if self.udp:
            out.lost, out.datagrams, out.jitter_ms = rec.lost, rec.total, rec.jitter_ms
            out.socket_drops = udp_receive_buffer_errors(self.host.netns_prefix) - self.drops_before
        out.raw[f"{self.host.label} iperf2 server"] = self.server.output()
        return out


@dataclass
class _Iperf3HostReceiving:
    host: HostEndpoint
    server: Iperf3Server

    def report(self, timeout_s: float) -> ReceiverReport:
        deadline = time.monotonic() + timeout_s
        proc = self.server.process
        while proc is not None and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # a one-test server (-1) prints its JSON and exits
        text = self.server.output()
        result = parse_json(text)
        out = ReceiverReport(result.receiver_mbps, duration_s=result.duration_s, jitter_ms=result.jitter_ms,
                             lost=result.lost_packets, datagrams=result.packets, bytes=result.bytes)  # fmt: skip
        out.raw[f"{self.host.label} iperf3 server JSON"] = text
        out.details = iperf3_details(json_document(text))
        return out


class HostEndpoint:
    """A host of the bench: in a network namespace (or the local host: an empty prefix), or a
    remote host reached over SSH (hil.plumbing.ssh_host: its prefix runs the program there)."""

    generators: tuple[Generator, ...] = ("iperf2", "iperf3")
    answers_udp_fin = True
    is_dut = False  # a host of the bench

    def __init__(
        self, name: str, netns_prefix: list[str], ip: str, workdir: Path,
        tcp_congestion: str | None = DEFAULT_TCP_CONGESTION, python: str = sys.executable,
        stop_when: StopWhen | None = None,
    ) -> None:  # fmt: skip
        self.name = name
        # why a client of this host should stop now (the DUT between the hosts died), or None
        self.stop_when = stop_when
        self.netns_prefix = netns_prefix  # runs a program on the host: a namespace's, or an SSH session's
        self.python = python  # the host's Python (its stream peer runs on it)
        self.ip = ip
        self.workdir = workdir
        self.tcp_congestion = tcp_congestion

    @property
    def label(self) -> str:
        return self.name.lower()

    @contextmanager
    def receive(self, flow: FlowSpec, generator: Generator) -> Iterator[Receiving]:
        udp = flow.proto == "udp"
        if generator == "iperf3":
            log = self.workdir / f"iperf3-server-{flow.proto}-{flow.port}.json"
            with Iperf3Server(self.netns_prefix, flow.port, log) as srv3:
                yield _Iperf3HostReceiving(self, srv3)
            return
        log = self.workdir / f"iperf2-server-{flow.proto}-{flow.port}.csv"
        window = flow.window or (HOST_UDP_RCVBUF if udp else None)
        extra = (["-w", window] if window else []) + (["-M", str(flow.mss)] if flow.mss else [])
        drops_before = udp_receive_buffer_errors(self.netns_prefix) if udp else 0
        with Iperf2Server(self.netns_prefix, udp=udp, port=flow.port, log_path=log, extra=extra) as srv:
            yield _Iperf2HostReceiving(self, srv, udp, drops_before)

    def send(self, flow: FlowSpec, to: str, generator: Generator) -> SenderReport:
        udp = flow.proto == "udp"
        # stopped early when its far end died (stop_when) or went silent once the test is overdue
        stop_when = either(self.stop_when, silent_when_overdue(self.netns_prefix, to, flow.duration_s))
        if generator == "iperf3":
            rate = f"{flow.rate_mbps:g}M" if flow.rate_mbps else None
            args3 = Iperf3ClientArgs(host=to, port=flow.port, udp=udp, duration_s=flow.duration_s, length=flow.length,
                                     bandwidth=rate, window=flow.window, congestion=self.tcp_congestion,
                                     amount=flow.amount, mss=flow.mss, nodelay=flow.nodelay)  # fmt: skip
            result, text = run_iperf3_client(self.netns_prefix, args3, flow.timeout_s, stop_when)
            receiver = ReceiverReport(
                result.receiver_mbps, duration_s=result.duration_s, jitter_ms=result.jitter_ms,
                lost=result.lost_packets, datagrams=result.packets, bytes=result.bytes,
            )  # fmt: skip
            details = iperf3_details(json_document(text))
            raw = {f"{self.label} iperf3 client JSON": text}
            return SenderReport(result.sender_mbps, result.sent_bytes, raw, details, receiver)
        args = Iperf2ClientArgs(
            host=to, port=flow.port, udp=udp, duration_s=flow.duration_s, amount=flow.amount, length=flow.length,
            bandwidth=flow.rate_arg(), window=flow.window, mss=flow.mss, congestion=self.tcp_congestion,
            udp_fin=flow.udp_fin, nodelay=flow.nodelay,
        )  # fmt: skip
        run = run_iperf2_client(self.netns_prefix, args, timeout_s=flow.timeout_s, stop_when=stop_when)
        raw = {f"{self.label} iperf2 client": f"$ {' '.join(run.argv)}\n{run.raw}"}
        return SenderReport(run.record.mbps, bytes=run.record.bytes, raw=raw)

    def abort(self) -> None:
        """A host's client and server end with their context or their process."""


# --- the DUT through its console (dialect: the project firmware's iperf) ----------------------
def dut_iperf_line(flow: FlowSpec, server_ip: str | None) -> str:
    parts = ["iperf", "-c", server_ip] if server_ip else ["iperf", "-s"]
    if flow.proto == "udp":
        parts.append("-u")
    parts += ["-p", str(flow.port)]
    if server_ip:
        parts += ["-n", flow.amount] if flow.amount else ["-t", f"{flow.duration_s:g}"]
        if flow.length:
            parts += ["-l", str(flow.length)]
        if rate := flow.rate_arg():
            parts += ["-b", rate]
        if flow.nodelay:
            parts.append("-N")
    return " ".join(parts)


@dataclass
class _DutReceiving:
    dut: DutConsoleEndpoint
    udp: bool

    def report(self, timeout_s: float) -> ReceiverReport:
        reply = self.dut.console.wait_final("iperf", timeout_s=timeout_s)
        final = reply.final
        if not final.ok or final.fields.get("status") != "ok":
            raise DutError(f"DUT server ended with {final.reason or final.fields.get('status')}")
        out = ReceiverReport(
            final.get_float("mbps"), bytes=final.get_int("bytes"), duration_s=final.get_int("duration_us") / 1e6
        )
        if self.udp:
            out.lost, out.datagrams = final.get_int("lost"), final.get_int("datagrams")
            require(out.lost <= out.datagrams, "more datagrams lost than were counted", final.text)
            out.jitter_ms = final.get_float("jitter_ms")
        out.raw[f"{self.dut.label} console"] = "\n".join(reply.output)
        return out


class ConsoleEndpoint:
    """What every DUT-console endpoint shares, whatever its dialect: its name as the report gives
    it, its address, iperf 2 on the wire; whether its UDP server answers the client's FIN."""

    generators: tuple[Generator, ...] = ("iperf2",)
    answers_udp_fin = True
    is_dut = True

    def __init__(self, name: str, ip: str) -> None:
        self.name = name
        self.ip = ip

    @property
    def label(self) -> str:
        return self.name.lower()


class DutConsoleEndpoint(ConsoleEndpoint):
    """The DUT's own iperf, driven through its console (the hil-fw dialect: iperf 2 on the wire)."""

    def __init__(self, name: str, console: ConsoleDriver, ip: str) -> None:
        super().__init__(name, ip)
        self.console = console

    @contextmanager
    def receive(self, flow: FlowSpec, generator: Generator) -> Iterator[Receiving]:
        self.console.send(dut_iperf_line(flow, None))
        self.console.wait_text(r"server listening", timeout_s=10)
        yield _DutReceiving(self, flow.proto == "udp")

    def send(self, flow: FlowSpec, to: str, generator: Generator) -> SenderReport:
        line = dut_iperf_line(flow, to)
        self.console.send(line)
        reply = self.console.wait_final(line, timeout_s=flow.timeout_s)
        if not reply.final.ok:
            raise DutError(f"DUT refused `{line}`: {reply.final.reason}")
        if reply.final.fields.get("status") != "ok":
            raise DutError(f"DUT client ended with status {reply.final.fields.get('status')}")
        return SenderReport(reply.final.get_float("mbps"), raw={f"{self.label} console": "\n".join(reply.output)})

    def abort(self) -> None:
        self.console.command("iperf -a", timeout_s=10, accept=lambda f: "action" in f.fields)


@dataclass
class FlowResult:
    """Both sides' numbers of one flow; the receiver's goodput is the measurement."""

    sender: SenderReport
    receiver: ReceiverReport
    generator: Generator

    @property
    def raw(self) -> dict[str, str]:
        return {**self.receiver.raw, **self.sender.raw}


def run_flow(sender: Endpoint, receiver: Endpoint, flow: FlowSpec, generator: Generator | None = None,
             while_running: Callable[[], None] | None = None) -> FlowResult:  # fmt: skip
    """Starts `receiver`'s server, sends the flow from `sender` to it and collects both reports.
    `while_running` is called once the sender starts (e.g. to sample the connection)."""
    gen = common_generator(sender, receiver, generator)
    if not receiver.answers_udp_fin:  # Espressif's console iperf: no report to wait for
        flow = dataclasses.replace(flow, udp_fin=False)
    with timed("traffic: the receiver's start and end"), receiver.receive(flow, gen) as rx:
        if while_running is not None:
            while_running()
        try:
            with timed("traffic"):
                sent = sender.send(flow, receiver.ip, gen)
        except BenchError:
            receiver.abort()
            raise
        with timed("traffic: the receiver's report"):
            received = rx.report(timeout_s=flow.timeout_s)
    if sent.receiver is not None and gen == "iperf3":  # the client's JSON holds the receiver's view too
        received.details = {**sent.receiver.details, **received.details}
    if received.sender_is_reference:
        received.mbps = sent.mbps
        received.bytes = sent.bytes if sent.bytes is not None else received.bytes
    if flow.proto == "udp" and received.lost is None:
        estimate_loss_from_bytes(received, sent, flow)
    return FlowResult(sent, received, gen)


def estimate_loss_from_bytes(received: ReceiverReport, sent: SenderReport, flow: FlowSpec) -> None:
    """A receiver that counts no lost datagrams (Espressif's iperf server prints only its rate):
    the datagrams the sender wrote less those the receiver's bytes hold; marked in the details
    (`loss_from_bytes`), as the receiver's bytes are its rate x time (to two decimals)."""
    length = flow.length or 1470
    if received.bytes is None or not sent.bytes:
        return
    datagrams = sent.bytes // length
    arrived = min(datagrams, round(received.bytes / length))
    received.datagrams, received.lost = datagrams, datagrams - arrived
    received.details["loss_from_bytes"] = 1.0
