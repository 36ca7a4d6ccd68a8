"""Traffic in the terms of the matrix, PC <-> far end: a scenario says what should flow ("the
DUT transmits UDP at 90 Mbit/s for 10 s with 1470-byte datagrams") and run_traffic sends it
between the PC (a host endpoint) and the far end (hil.traffic.endpoints: the DUT's console
endpoint, or the peer host of a DUT in the path, where `dut_tx` is the uplink peer -> PC and
`dut_rx` the downlink), returning both sides' numbers, the receiver's goodput first, with what
the PC side adds (the connection's observed MSS, its own socket's UDP drops). Both directions at
once: run_bidir (PC <-> DUT console) and run_bidir_hosts (iperf 3 --bidir, PC <-> peer), which
the far end's `bidir` operation calls (hil.traffic.far_end).
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hil.bench_faults import GENERATOR_TOLERANCE  # a sender of the bench below it fell short of its rate
from hil.config.sections import DEFAULT_TCP_CONGESTION
from hil.console.embedded_console import EmbeddedConsole
from hil.errors import BenchError, DutError
from hil.numbers import require
from hil.tools.iperf2 import Iperf2ClientArgs, Iperf2Server, run_client
from hil.tools.iperf3 import Iperf3ClientArgs, Iperf3Server, parse_bidir_json
from hil.tools.iperf3 import run_client as run_iperf3_client
from hil.tools.watched_run import StopWhen
from hil.traffic.endpoints import (
    HOST_UDP_RCVBUF,
    Endpoint,
    FlowSpec,
    Generator,
    HostEndpoint,
    dut_iperf_line,
    run_flow,
    udp_receive_buffer_errors,
)


@dataclass(frozen=True)
class TrafficSpec:
    proto: Literal["tcp", "udp"]
    direction: Literal["dut_tx", "dut_rx"]
    duration_s: float  # with `amount`: the expected duration (sets the timeouts)
    length: int | None = None
    rate_mbps: float | None = None  # required for UDP: never iperf's 1 Mbit/s default
    port: int = 5001
    amount: str | None = None  # bytes to transfer (iperf -n) instead of a duration
    pc_window: str | None = None  # PC-side socket buffer (iperf -w)
    pc_mss: int | None = None  # PC-side TCP_MAXSEG (iperf -M)
    observe_mss: bool = False  # read the connection's MSS from the PC's kernel during the test
    nodelay: bool = False  # the TCP sender's Nagle off (iperf -N; the DUT's client -N when it sends)

    def __post_init__(self) -> None:
        if self.proto == "udp" and not self.rate_mbps:
            raise ValueError("UDP traffic needs an explicit rate")
        if self.proto == "udp" and self.nodelay:
            raise ValueError("TCP_NODELAY (-N) is a TCP option")
        if self.duration_s <= 0:
            raise ValueError("duration must be positive")

    @property
    def case_id(self) -> str:
        return f"{self.proto}-{self.direction}"

    def rate_arg(self) -> str | None:
        """iperf's -b with lowercase (decimal) suffix: k = 1000 bit/s."""
        return f"{round(self.rate_mbps * 1000)}k" if self.rate_mbps else None


@dataclass
class TrafficResult:
    spec: TrafficSpec
    receiver_mbps: float
    sender_mbps: float
    loss_pct: float | None = None
    lost: int | None = None
    datagrams: int | None = None
    jitter_ms: float | None = None
    # a sender of the bench (never the DUT) fell short of the offered rate (hil.bench_faults.GENERATOR_SHORT)
    generator_limited: bool = False
    sender_is_dut: bool = False  # the DUT sent it: its shortfall is its own
    bytes: int | None = None
    duration_s: float | None = None
    observed_mss: int | None = None  # MSS of the segments on the wire in the test's direction
    # datagrams that reached the PC and were dropped by its own UDP socket buffers (a descheduled
    # PC server): counted by iperf as lost, but the DUT delivered them, so loss_pct leaves them out
    pc_receive_drops: int = 0
    raw: dict[str, str] = field(default_factory=dict)
    details: dict[str, float] = field(default_factory=dict)  # a generator's own (iperf 3: retransmits, cwnd, CPU)


_SS_MSS = re.compile(r"\bmss:(\d+)")
_SS_RCVMSS = re.compile(r"\brcvmss:(\d+)")


_SS_BYTES_SENT = re.compile(r"\bbytes_sent:(\d+)")
_SS_BYTES_RECEIVED = re.compile(r"\bbytes_received:(\d+)")


def parse_ss_mss(text: str, pc_sends: bool) -> int | None:
    """MSS from `ss -tin`: the PC's send MSS when it sends, its estimate of the received
    segments' size (rcvmss) when it receives; of the connection that carried the most data in
    that direction (iperf 3 also holds a control connection on the test's port)."""
    mss_re, bytes_re = (_SS_MSS, _SS_BYTES_SENT) if pc_sends else (_SS_RCVMSS, _SS_BYTES_RECEIVED)
    best: tuple[int, int] | None = None  # (bytes, mss)
    for info in text.split("\n"):
        m = mss_re.search(info)
        if m is None:
            continue
        b = bytes_re.search(info)
        entry = (int(b.group(1)) if b else 0, int(m.group(1)))
        if best is None or entry[0] > best[0]:
            best = entry
    return best[1] if best else None


class _MssProbe:
    """Samples the test connection's MSS in the PC namespace while the test runs."""

    def __init__(self, pc: PcSide, spec: TrafficSpec) -> None:
        self.text = ""
        delay = min(0.5, spec.duration_s / 2) if spec.amount else spec.duration_s / 2
        argv = [*pc.netns_prefix, "ss", "-tin", f"( sport = :{spec.port} or dport = :{spec.port} )"]

        def sample() -> None:
            time.sleep(delay)
            self.text = subprocess.run(argv, capture_output=True, text=True, check=False).stdout

        self.thread = threading.Thread(target=sample, daemon=True)
        self.thread.start()

    def result(self, pc_sends: bool) -> int | None:
        self.thread.join(timeout=5)
        return parse_ss_mss(self.text, pc_sends)


@dataclass
class PcSide:
    netns_prefix: list[str]
    ip: str
    workdir: Path
    tcp_congestion: str | None = DEFAULT_TCP_CONGESTION  # of the PC's TCP senders (bench file pc.tcp_congestion)
    stop_when: StopWhen | None = None  # why the PC's clients should stop now (the DUT in the path died)
    # the traffic's near end where it is not the PC: a second DUT beside the DUT on its link (DUT to
    # DUT, hil.behind.near_end_of); None: the PC's own iperf in its namespace
    near: Endpoint | None = None


@dataclass
class DutSide:
    console: EmbeddedConsole
    ip: str


def dut_loss_pct(r: TrafficResult) -> float:
    """The receiver's loss less what the PC's own socket buffers dropped (never below 0)."""
    if not r.datagrams:
        return 0.0
    return 100.0 * max(0, (r.lost or 0) - r.pc_receive_drops) / r.datagrams


def _limited(sent_mbps: float, spec: TrafficSpec) -> bool:
    return spec.rate_mbps is not None and sent_mbps < GENERATOR_TOLERANCE * spec.rate_mbps


def pc_endpoint(pc: PcSide) -> HostEndpoint:
    return HostEndpoint("PC", pc.netns_prefix, pc.ip, pc.workdir, pc.tcp_congestion, stop_when=pc.stop_when)


def flow_of(spec: TrafficSpec) -> FlowSpec:
    return FlowSpec(spec.proto, spec.duration_s, port=spec.port, length=spec.length, rate_mbps=spec.rate_mbps,
                    amount=spec.amount, window=spec.pc_window, mss=spec.pc_mss, nodelay=spec.nodelay)  # fmt: skip


def run_traffic(spec: TrafficSpec, pc: PcSide, far: Endpoint, generator: Generator | None = None) -> TrafficResult:
    """The spec's direction as a flow between the PC and the far end (hil.traffic.endpoints): the
    DUT's console when the DUT terminates traffic, the peer host when it forwards it; `dut_tx` is
    far end -> PC (an in-path DUT's uplink), `dut_rx` PC -> far end (its downlink)."""
    pc_end = pc.near if pc.near is not None else pc_endpoint(pc)
    sender, receiver = (far, pc_end) if spec.direction == "dut_tx" else (pc_end, far)
    probe: list[_MssProbe] = []
    sample = (lambda: probe.append(_MssProbe(pc, spec))) if spec.observe_mss and pc.near is None else None
    flow = run_flow(sender, receiver, flow_of(spec), generator, while_running=sample)
    rx = flow.receiver
    result = TrafficResult(spec, receiver_mbps=rx.mbps, sender_mbps=flow.sender.mbps, sender_is_dut=sender.is_dut)
    result.bytes, result.duration_s = rx.bytes, rx.duration_s
    if flow.generator == "iperf3" and spec.proto == "tcp" and flow.sender.bytes is not None:
        # iperf 3's server stops counting when the test ends, before the last data in flight; TCP
        # delivered all the sender wrote in a test that ended cleanly
        result.bytes = flow.sender.bytes
    result.raw = flow.raw
    result.details = {**flow.sender.details, **rx.details}
    if probe:
        result.observed_mss = probe[0].result(pc_sends=sender is pc_end)
    if spec.proto == "udp":
        result.lost, result.datagrams, result.jitter_ms = rx.lost, rx.datagrams, rx.jitter_ms
        result.pc_receive_drops = rx.socket_drops
        result.loss_pct = dut_loss_pct(result)
        result.generator_limited = not sender.is_dut and _limited(result.sender_mbps, spec)
    return result


@dataclass
class BidirResult:
    dut_tx: TrafficResult
    dut_rx: TrafficResult


def run_bidir(proto: Literal["tcp", "udp"], duration_s: float, rate_mbps: float | None, pc: PcSide, dut: DutSide,
              length: int | None = None) -> BidirResult:  # fmt: skip
    """Both directions at once: the DUT's client sends to a PC server (port 5001) while a PC
    client sends to the DUT's server (port 5002); numbers per direction."""
    tx = TrafficSpec(proto, "dut_tx", duration_s, length=length, rate_mbps=rate_mbps, port=5001)
    rx = TrafficSpec(proto, "dut_rx", duration_s, length=length, rate_mbps=rate_mbps, port=5002)
    timeout = duration_s * 2 + 30
    log = pc.workdir / f"iperf2-server-bidir-{proto}.csv"
    extra = ["-w", HOST_UDP_RCVBUF] if proto == "udp" else []
    drops_before = udp_receive_buffer_errors(pc.netns_prefix) if proto == "udp" else 0
    with Iperf2Server(pc.netns_prefix, udp=proto == "udp", port=tx.port, log_path=log, extra=extra) as srv:
        dut.console.send(dut_iperf_line(flow_of(rx), None))
        dut.console.wait_text(r"server listening", timeout_s=10)
        args = Iperf2ClientArgs(host=dut.ip, port=rx.port, udp=proto == "udp", duration_s=duration_s,
                                length=length, bandwidth=rx.rate_arg(), congestion=pc.tcp_congestion)  # fmt: skip
        pc_client = threading.Thread(target=lambda: runs.append(run_client(pc.netns_prefix, args, timeout)))
        runs: list = []
        dut.console.send(dut_iperf_line(flow_of(tx), pc.ip))
        pc_client.start()
        finals = dut.console.wait_finals("iperf", 2, timeout_s=timeout)
        pc_client.join(timeout=timeout)
        if not runs:
            raise BenchError("the PC iperf client of the bidirectional test did not finish")
        record = srv.wait_record(timeout_s=10)
        pc_raw = srv.output()
    by_role = {r.final.fields.get("role"): r for r in finals}
    if set(by_role) != {"client", "server"} or any(r.final.fields.get("status") != "ok" for r in finals):
        raise DutError(f"bidirectional test ended with {[r.final for r in finals]}")
    client, server, run = by_role["client"].final, by_role["server"].final, runs[0]
    out_tx = TrafficResult(tx, receiver_mbps=record.mbps, sender_mbps=client.get_float("mbps"), sender_is_dut=True)
    out_rx = TrafficResult(rx, receiver_mbps=server.get_float("mbps"), sender_mbps=run.record.mbps)
    dut_log = "\n".join(by_role["client"].output + by_role["server"].output)
    out_tx.raw = {"pc iperf2 server": pc_raw, "dut console": dut_log}
    out_rx.raw = {"pc iperf2 client": f"$ {' '.join(run.argv)}\n{run.raw}", "dut console": dut_log}
    if proto == "udp":
        out_tx.lost, out_tx.datagrams, out_tx.jitter_ms = record.lost, record.total, record.jitter_ms
        out_rx.lost, out_rx.datagrams = server.get_int("lost"), server.get_int("datagrams")
        require(out_rx.lost <= out_rx.datagrams, "more datagrams lost than were counted", server.text)
        out_rx.jitter_ms = server.get_float("jitter_ms")
        out_tx.pc_receive_drops = udp_receive_buffer_errors(pc.netns_prefix) - drops_before
        for r in (out_tx, out_rx):
            r.loss_pct = dut_loss_pct(r)
            r.generator_limited = not r.sender_is_dut and _limited(r.sender_mbps, r.spec)
    return BidirResult(out_tx, out_rx)


def run_bidir_duts(proto: Literal["tcp", "udp"], duration_s: float, rate_mbps: float | None, dut: DutSide,
                   near: DutSide, length: int | None = None) -> BidirResult:  # fmt: skip
    """Both directions at once between two DUTs on one link (DUT to DUT), both through their
    consoles: each DUT's iperf server listens (the partner's on 5001, the DUT's on 5002), then each
    DUT's client sends to the other; `dut_tx` is DUT -> partner, `dut_rx` partner -> DUT, each with
    its receiving DUT's numbers."""
    tx = TrafficSpec(proto, "dut_tx", duration_s, length=length, rate_mbps=rate_mbps, port=5001)
    rx = TrafficSpec(proto, "dut_rx", duration_s, length=length, rate_mbps=rate_mbps, port=5002)
    timeout = duration_s * 2 + 30
    for console, spec in ((near.console, tx), (dut.console, rx)):
        console.send(dut_iperf_line(flow_of(spec), None))
        console.wait_text(r"server listening", timeout_s=10)
    dut.console.send(dut_iperf_line(flow_of(tx), near.ip))
    near.console.send(dut_iperf_line(flow_of(rx), dut.ip))
    ended: dict[str, list] = {}
    other = threading.Thread(target=lambda: ended.update(near=near.console.wait_finals("iperf", 2, timeout)))
    other.start()
    mine = dut.console.wait_finals("iperf", 2, timeout_s=timeout)
    other.join(timeout=timeout)
    if "near" not in ended:
        raise DutError("the partner's console did not end both of its iperf tests of the bidirectional test")
    roles = {}
    for who, finals in (("the DUT", mine), ("its partner", ended["near"])):
        by_role = {r.final.fields.get("role"): r for r in finals}
        if set(by_role) != {"client", "server"} or any(r.final.fields.get("status") != "ok" for r in finals):
            raise DutError(f"bidirectional test ended on {who} with {[r.final for r in finals]}")
        roles[who] = by_role
    d, n = roles["the DUT"], roles["its partner"]
    out_tx = TrafficResult(tx, receiver_mbps=n["server"].final.get_float("mbps"),
                           sender_mbps=d["client"].final.get_float("mbps"), sender_is_dut=True)  # fmt: skip
    out_rx = TrafficResult(rx, receiver_mbps=d["server"].final.get_float("mbps"),
                           sender_mbps=n["client"].final.get_float("mbps"), sender_is_dut=True)  # fmt: skip
    logs = {who: "\n".join(r["client"].output + r["server"].output) for who, r in (("dut", d), ("partner", n))}
    out_tx.raw = out_rx.raw = {"dut console": logs["dut"], "partner console": logs["partner"]}
    if proto == "udp":
        for out, server in ((out_tx, n["server"].final), (out_rx, d["server"].final)):
            out.lost, out.datagrams = server.get_int("lost"), server.get_int("datagrams")
            require(out.lost <= out.datagrams, "more datagrams lost than were counted", server.text)
            out.jitter_ms = server.get_float("jitter_ms")
            out.loss_pct = dut_loss_pct(out)
    return BidirResult(out_tx, out_rx)


# Both hosts' TCP window in a bidirectional test (iperf 3 -w, both ends): each direction's ACKs
# queue behind the other direction's data in the shaper (tbf, 50 ms of the link), so two windows
# that grow until that queue overflows (cubic) starve each other's ACKs, and which direction loses
# within a 2-s test was chance (the bridge's downlink 84.1-96.4 % over runs). A window that covers
# the path's round trip several times over (at 100 Mbit/s 5 ms of the link, at 20 Mbit/s 26 ms)
# but never fills the queue keeps both directions lossless, within a few percent of the link's
# share every run (thresholds/bridge-20m.yaml: 92.3-96.3 %).
BIDIR_HOST_WINDOW = "64K"


def run_bidir_hosts(
    proto: Literal["tcp", "udp"], duration_s: float, rate_mbps: float | None, pc: PcSide, far: HostEndpoint,
    length: int | None = None, amount: str | None = None,
) -> BidirResult:  # fmt: skip
    """Both directions at once between the PC and a peer host (an in-path DUT forwards them): one
    iperf 3 --bidir test, the PC the client; `dut_rx` is PC -> peer (downlink), `dut_tx` peer -> PC
    (uplink), each with its receiver's numbers. `amount`: iperf 3's -n instead of a duration (the
    test ends when that many bytes are sent; `duration_s` is then its expected length)."""
    rx = TrafficSpec(proto, "dut_rx", duration_s, length=length, rate_mbps=rate_mbps, port=5002, amount=amount)
    tx = TrafficSpec(proto, "dut_tx", duration_s, length=length, rate_mbps=rate_mbps, port=5002, amount=amount)
    timeout = duration_s * 2 + 30
    far.workdir.mkdir(parents=True, exist_ok=True)
    log = far.workdir / f"iperf3-server-bidir-{proto}.json"
    args = Iperf3ClientArgs(host=far.ip, port=rx.port, udp=proto == "udp", duration_s=duration_s, length=length,
                            bandwidth=f"{rate_mbps:g}M" if rate_mbps else None, bidir=True,
                            congestion=pc.tcp_congestion, amount=amount,
                            window=BIDIR_HOST_WINDOW if proto == "tcp" else None)  # fmt: skip
    with Iperf3Server(far.netns_prefix, rx.port, log) as server:
        _, text = run_iperf3_client(pc.netns_prefix, args, timeout)
        server_text = server.output()
    down, up = parse_bidir_json(text)
    raw = {"pc iperf3 --bidir client JSON": text, f"{far.label} iperf3 server JSON": server_text}
    out = []
    for spec, r in ((rx, down), (tx, up)):
        res = TrafficResult(
            spec, receiver_mbps=r.receiver_mbps, sender_mbps=r.sender_mbps, raw=raw if spec is rx else {}
        )  # fmt: skip  (one test: its output once)
        if proto == "udp":
            res.lost, res.datagrams, res.jitter_ms = r.lost_packets, r.packets, r.jitter_ms
            res.loss_pct = dut_loss_pct(res)
            res.generator_limited = _limited(res.sender_mbps, spec)
        out.append(res)
    return BidirResult(dut_tx=out[1], dut_rx=out[0])
