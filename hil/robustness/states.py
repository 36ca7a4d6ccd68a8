"""The service states a robustness class is sent in: what the DUT is doing while the hostile
frames arrive. `idle` is the DUT doing nothing (the family's first form); the others put a
service of the DUT's console up first and keep it up through the class:

| state | the DUT | during the class |
|---|---|---|
| tcp_server / udp_server | its iperf server listening | the PC's real client starts a moment after the frames |
| tcp_server_test / udp_server_test | its server in a test | the PC's client sends at a quarter of the link |
| tcp_server_after / udp_server_after | its server just after a test (TIME_WAIT, a UDP server's lingering answers) | - |
| tcp_client / tcp_client_n / udp_client | its own client sending to the PC (-t, -n) | - |
| ping | pinging the PC, which does not answer (its namespace's echo replies off) | - |
| forwarding | a DUT in the path forwarding the PC's TCP to the peer | - |

What a state finds (`StateOutcome`): how long beyond its normal time the real client of the state
waited (`delay_ms`, None when no test of the state's ended), and what was untrue: a test that did
not end by itself within the bound, a client that was not served, a figure of the DUT's that the
PC's own count contradicts (bytes, datagrams, ping replies). Every finding is the DUT's failure.

A state's threads use the DUT's console; the family uses it again only after `finish()`.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from hil.console.dialects.capabilities import NotApplicable
from hil.errors import BenchError, DutError
from hil.plumbing.proc import die_with_parent
from hil.robustness.live import Live, PacketCount, capture_live
from hil.traffic.endpoints import FlowSpec, common_generator, read_snmp, run_flow, snmp_counters
from hil.traffic.roles import pc_endpoint

if TYPE_CHECKING:
    from hil.session import HilContext
    from hil.traffic.endpoints import FlowResult, Receiving, SenderReport

Where = Literal["any", "console", "path"]
Role = Literal["none", "server", "client", "ping", "through"]
Phase = Literal["idle", "listening", "running", "after"]

SERVE_S = 1.0  # the real client's test: its normal time
LOAD_SHARE = 0.25  # a state's own test runs at this share of the link
DEFAULT_LINK_MBIT = 10.0  # a bench whose link rate is unknown
PING_INTERVAL_S = 0.05
PORT = 5001
RUNNING_MARGIN_S = 3.0  # a state's running test lasts the class's time and this
THROUGH_SETTLE_S = 1.5  # a flow through a DUT in the path runs this long before the class (and that much longer)
STATE_SLACK_S = 2.0  # beyond the state's bound: how long to wait for its test before giving up on it
# iperf 2's server reads a connection's first 4 bytes as the client header's flags word and does not
# count them (the project firmware's client sends no header: zeros); seen as exactly 4 bytes fewer
# than the DUT's client had acknowledged in every run without hostile TCP frames
IPERF2_FLAGS_WORD = 4
STRANGER_PORTS = "30000-30015"  # the forged class's FINs come from these ports of the PC (service_classes)


@dataclass(frozen=True)
class StateDef:
    name: str
    title: str
    where: Where  # console: the DUT's own services (a DUT that ends traffic); path: a DUT in the path
    role: Role
    proto: Literal["tcp", "udp"] | None
    phase: Phase
    amount: bool = False  # the DUT's client with -n (bytes) instead of -t


STATES: dict[str, StateDef] = {s.name: s for s in (
    StateDef("idle", "idle: no service running", "any", "none", None, "idle"),
    StateDef("tcp_server", "its TCP iperf server listening", "console", "server", "tcp", "listening"),
    StateDef("tcp_server_test", "its TCP iperf server in a test", "console", "server", "tcp", "running"),
    StateDef("tcp_server_after", "its TCP iperf server just after a test", "console", "server", "tcp", "after"),
    StateDef("udp_server", "its UDP iperf server listening", "console", "server", "udp", "listening"),
    StateDef("udp_server_test", "its UDP iperf server in a test", "console", "server", "udp", "running"),
    StateDef("udp_server_after", "its UDP iperf server just after a test (answering repeated FINs)", "console",
             "server", "udp", "after"),
    StateDef("tcp_client", "its TCP iperf client sending to the PC (-t)", "console", "client", "tcp", "running"),
    StateDef("tcp_client_n", "its TCP iperf client sending to the PC (-n)", "console", "client", "tcp", "running",
             amount=True),
    StateDef("udp_client", "its UDP iperf client sending to the PC", "console", "client", "udp", "running"),
    StateDef("ping", "pinging the PC (which does not answer)", "console", "ping", None, "running"),
    StateDef("forwarding", "forwarding the PC's TCP to the peer", "path", "through", "tcp", "running"),
)}  # fmt: skip


def applies(state: StateDef, in_path: bool, has_console: bool) -> str | None:
    """Why the state cannot be set up on this bench (None: it can)."""
    if state.where == "path" and not in_path:
        return f"state {state.name}: needs a DUT in the path (a bridge), the bench's DUT ends the traffic"
    if state.where == "console" and (in_path or not has_console):
        return f"state {state.name}: needs the DUT's own services through its console"
    return None


@dataclass
class StateOutcome:
    delay_ms: float | None = None  # the worst wait beyond its normal time of the state's real client
    findings: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # the evidence, for the case's attachment
    figures: dict[str, float] = field(default_factory=dict)


@dataclass
class _Job:
    """A test of the state's, in a thread: its result or its error, when it started and ended."""

    thread: threading.Thread | None = None
    started: float = 0.0
    ended: float | None = None
    result: object = None
    error: Exception | None = None

    def run(self, fn: object, delay_s: float = 0.0) -> None:
        def body() -> None:
            if delay_s:
                time.sleep(delay_s)
            self.started = time.monotonic()
            try:
                self.result = fn()  # type: ignore[operator]
            except Exception as exc:  # the state's test failed: its error is the finding
                self.error = exc
            finally:
                self.ended = time.monotonic()

        self.thread = threading.Thread(target=body, name="robustness-state", daemon=True)
        self.thread.start()

    def wait(self, timeout_s: float) -> bool:
        assert self.thread is not None
        self.thread.join(timeout_s)
        return not self.thread.is_alive()


class RunningState:
    """One state around one class: `start()` before the frames, `during()` as they begin,
    `finish()` after them; `close()` always (it undoes what `start()` changed)."""

    def __init__(self, hil: HilContext, state: StateDef, class_s: float, bound_ms: float, overhead_s: float = 0.0,
                 sink: bool = False, idle_connections: int = 0) -> None:  # fmt: skip
        self.hil, self.state, self.class_s, self.bound_ms = hil, state, class_s, bound_ms
        self.overhead_s = max(0.0, overhead_s)  # what the bench adds to a test's time (serve.normal)
        self.sink, self.idle_connections = sink, idle_connections  # the exhaust class's actors
        self.pc = pc_endpoint(hil.pc_side)
        self.far = hil.far_end
        self.stack = contextlib.ExitStack()
        self.job = _Job()
        self.rx: Receiving | None = None
        self.live: Live | None = None
        self.flow: FlowSpec | None = None
        self.actors: list[subprocess.Popen[str]] = []
        self.echo_ignore: str | None = None  # the PC namespace's setting to restore
        self.snmp_before: dict[str, int] | None = None
        self.answers: PacketCount | None = None  # the DUT's answers to strangers (after a UDP test)
        self.outcome = StateOutcome()
        # a running test outlasts the class: it starts before the live connection is read, the frames
        # built again and their sender started (a Python process importing scapy: ~1 s)
        self.duration_s = class_s + RUNNING_MARGIN_S

    # --- set-up --------------------------------------------------------------------------------
    def _rate(self) -> float:
        return round(LOAD_SHARE * (self.hil.link_mbit or DEFAULT_LINK_MBIT), 3)

    def start(self) -> None:
        s = self.state
        if s.phase == "idle":
            return
        gen = common_generator(self.pc, self.far)
        if s.role == "server":
            rate = self._rate() if s.proto == "udp" else None
            if s.phase == "after":  # a short test first: the class meets what it leaves behind
                run_flow(self.pc, self.far, FlowSpec(s.proto, 0.3, port=PORT, rate_mbps=rate or None), gen)  # type: ignore[arg-type]
                self.outcome.lines.append("a 0.3-s test to the DUT's server ended just before the class")
                if s.proto == "udp":  # its lingering answers go to that test's client only
                    pc = self.hil.pc_side
                    iface = _pc_iface(pc.netns_prefix, self.far.ip)
                    flt = f"udp and src host {self.far.ip} and src port {PORT} and dst portrange {STRANGER_PORTS}"
                    self.answers = PacketCount.start(pc.netns_prefix, iface, flt) if iface else None
                return
            if s.phase == "listening":
                self.flow = FlowSpec(s.proto, SERVE_S, port=PORT, rate_mbps=rate)  # type: ignore[arg-type]
                self.rx = self.stack.enter_context(self.far.receive(self.flow, gen))
                self._start_idle_connections()
                return
            self.flow = FlowSpec(s.proto, self.duration_s, port=PORT, rate_mbps=self._rate())  # type: ignore[arg-type]
            self.job.run(lambda: run_flow(self.pc, self.far, self.flow, gen))  # type: ignore[arg-type]
            self._capture_live()
            return
        if s.role == "client":
            rate = self._rate()
            amount = str(int(rate * 1e6 / 8 * self.duration_s)) if s.amount else None
            self.flow = FlowSpec(s.proto, self.duration_s, port=PORT, rate_mbps=rate, amount=amount)  # type: ignore[arg-type]
            if self.sink and s.proto == "tcp":  # a PC that accepts the DUT's connection and never reads
                self._start_actor(["sink", "--bind", self.hil.pc_side.ip, "--port", str(PORT),
                                   "--hold", f"{self.duration_s + self.bound_ms / 1000 + 2:g}"],
                                  wait_line=True)  # fmt: skip
                self.job.run(lambda: self.far.send(self.flow, self.hil.pc_side.ip, gen))  # type: ignore[arg-type]
            else:
                self.job.run(lambda: run_flow(self.far, self.pc, self.flow, gen))  # type: ignore[arg-type]
            time.sleep(0.3)  # the DUT's client connected and sending
            self._capture_live()
            return
        if s.role == "ping":
            if (why := self.far.lacks("ping")) is not None:
                raise NotApplicable(why)
            self._echo_replies_off()
            self.snmp_before = self._icmp_counters()
            count = max(10, int((self.class_s + 1.0) / PING_INTERVAL_S))
            self.duration_s = count * PING_INTERVAL_S + 1.0  # its last request's wait
            self.job.run(lambda: self.far.ping(self.hil.pc_side.ip, count, PING_INTERVAL_S, 30 + 2 * self.duration_s))
            time.sleep(0.2)
            return
        if s.role == "through":
            self.duration_s += THROUGH_SETTLE_S
            self.flow = FlowSpec("tcp", self.duration_s, port=PORT, rate_mbps=self._rate())
            self.job.run(lambda: run_flow(self.pc, self.far, self.flow, gen))  # type: ignore[arg-type]
            self._capture_live()  # the flow is on the wire (its server and client start over SSH)
            # ... and has been for a while: the bridge has heard both ends on their ports (a table
            # whose stations settle before they resist a forged move, fw_bridge_fdb.c)
            time.sleep(max(0.0, self.job.started + THROUGH_SETTLE_S - time.monotonic()))
            return

    def _capture_live(self) -> None:
        time.sleep(0.3)
        pc = self.hil.pc_side
        iface = _pc_iface(pc.netns_prefix, self.far.ip)
        if iface is not None and self.state.proto is not None:
            self.live = capture_live(pc.netns_prefix, iface, pc.ip, self.far.ip, self.state.proto, PORT)
        self.outcome.lines.append(
            f"live {self.state.proto} flow: {self.live}"
            if self.live
            else "no live flow seen on the wire before the class"
        )

    def _start_idle_connections(self) -> None:
        if self.idle_connections and self.state.proto == "tcp":
            self._start_actor(["idle", "--to", self.far.ip, "--port", str(PORT), "--count",
                               str(self.idle_connections), "--hold", f"{self.class_s:g}"])  # fmt: skip
            time.sleep(0.2)  # connected before the frames and the real client

    def _start_actor(self, args: list[str], wait_line: bool = False) -> None:
        import sys  # the suite's own interpreter, in the PC's namespace

        argv = [*self.hil.pc_side.netns_prefix, sys.executable, "-m", "hil.robustness.actors", *args]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=_root(),
                                preexec_fn=die_with_parent)  # fmt: skip
        self.actors.append(proc)
        if wait_line:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if '"listening"' not in line:
                raise BenchError(
                    f"the PC's never-reading server did not start: {line.strip() or proc.stderr.read()[-300:]}"
                )  # type: ignore[union-attr]

    def _echo_replies_off(self) -> None:
        prefix = self.hil.pc_side.netns_prefix
        if not prefix:  # the PC is the host itself: its replies stay on, the count below still holds
            return
        out = subprocess.run([*prefix, "sysctl", "-n", "net.ipv4.icmp_echo_ignore_all"], capture_output=True,
                             text=True, check=False)  # fmt: skip
        if out.returncode == 0:
            self.echo_ignore = out.stdout.strip()
            subprocess.run([*prefix, "sysctl", "-qw", "net.ipv4.icmp_echo_ignore_all=1"], check=False)

    def _icmp_counters(self) -> dict[str, int] | None:
        return snmp_counters(read_snmp(self.hil.pc_side.netns_prefix), "Icmp", ("OutEchoReps",))

    # --- the class begins -------------------------------------------------------------------------
    def during(self) -> None:
        """The class's first frames are on their way: a listening server's real client starts."""
        if self.state.phase != "listening":
            return
        gen = common_generator(self.pc, self.far)
        delay = min(0.5, self.class_s / 3)
        self.job.run(lambda: self.pc.send(self.flow, self.far.ip, gen), delay_s=delay)  # type: ignore[arg-type]

    # --- after the class ----------------------------------------------------------------------------
    def finish(self, last_frame_at: float | None = None) -> StateOutcome:
        """What the state found; `last_frame_at` (time.monotonic()): when the class's last frame
        went out. A running test that ran its whole time and still ended before it met only part
        of the class: the bench's timing, proven by the two clocks, nothing of the DUT's measured."""
        s, out = self.state, self.outcome
        if s.phase == "running" and last_frame_at is not None and self.job.thread is not None:
            self.job.wait(0.0)
            ran = (self.job.ended or 0.0) - self.job.started
            # ended early by itself (an error, a reset) is the DUT's, judged below; only a test that
            # ran its whole time and still ended before the last frame is the bench's timing
            if (
                self.job.ended is not None
                and self.job.ended < last_frame_at
                and self.job.error is None
                and (ran >= self.duration_s - 0.1)
            ):
                raise BenchError(
                    f"{s.title}: its test ended {last_frame_at - self.job.ended:.2f} s before the class's last "
                    f"frame (the bench's timing: the state's margin of {RUNNING_MARGIN_S:g} s was short); "
                    "nothing of the DUT's was measured in this state"
                )
        if self.answers is not None:
            n = self.answers.stop()
            self.answers = None
            out.figures["answers_to_strangers"] = float(n)
            out.lines.append(f"the DUT's UDP server sent {n} datagrams to PC ports that ran no test")
            if n:
                out.findings.append(f"{s.title}: the DUT answered {n} FINs from ports that ran no test with its "
                                    "last test's report (a reflector: it answers whoever asks)")  # fmt: skip
        if s.phase in ("idle", "after"):
            return out
        if self.job.thread is None:
            return out
        bound_s = self.bound_ms / 1000
        expected = (self.duration_s if s.phase == "running" else SERVE_S) + self.overhead_s
        done = self.job.wait(max(0.0, self.job.started + expected + bound_s + STATE_SLACK_S - time.monotonic()))
        if not done:
            out.findings.append(
                f"{s.title}: its test had not ended {expected + bound_s + STATE_SLACK_S:.1f} s after it began "
                f"(normal time {expected:g} s, bound +{self.bound_ms:.0f} ms)"
            )
            self.job.wait(self.flow.timeout_s if self.flow else 60)  # its own timeout ends it
            with contextlib.suppress(Exception):
                self.far.abort()
            return out
        elapsed = (self.job.ended or 0) - self.job.started
        if s.phase == "listening":
            return self._finish_listening(elapsed)
        if self.job.error is not None:
            who = "the DUT's client" if s.role == "client" else "the state's test"
            if self.sink and s.role == "client":
                out.lines.append(f"{who} against the never-reading PC ended: {self.job.error}")
            else:
                out.findings.append(f"{s.title}: {who} failed during the class: {self.job.error}")
                return out
        out.delay_ms = round(max(0.0, elapsed - expected) * 1000, 1)
        out.lines.append(f"{s.title}: its test ended {elapsed:.2f} s after it began (normal {expected:g} s)")
        self._truth(out)
        return out

    def _finish_listening(self, elapsed: float) -> StateOutcome:
        out, s = self.outcome, self.state
        if self.job.error is not None:
            out.findings.append(f"{s.title}: the PC's real client was not served during the class: {self.job.error}")
            return out
        assert self.rx is not None and self.flow is not None
        try:
            got = self.rx.report(timeout_s=self.flow.timeout_s)
        except (DutError, BenchError) as exc:
            out.findings.append(f"{s.title}: the DUT's server gave no result for the PC's real client: {exc}")
            return out
        finally:
            self.stack.close()
        out.delay_ms = round(max(0.0, elapsed - SERVE_S - self.overhead_s) * 1000, 1)
        out.lines.append(f"the PC's real client, started during the class, was served in {elapsed:.2f} s "
                         f"(normal {SERVE_S + self.overhead_s:.2f} s)")  # fmt: skip
        sent: SenderReport = self.job.result  # type: ignore[assignment]
        if s.proto == "tcp" and sent.bytes is not None and got.bytes is not None and got.bytes != sent.bytes:
            out.findings.append(
                f"{s.title}: the DUT's server counted {got.bytes} bytes, the PC's client sent {sent.bytes}"
            )
        return out

    def _truth(self, out: StateOutcome) -> None:
        """The DUT's figures against the PC's own count."""
        s, res = self.state, self.job.result
        if s.role == "ping":
            stats = res[0]  # type: ignore[index]
            after = self._icmp_counters()
            replies = (after or {}).get("OutEchoReps", 0) - (self.snmp_before or {}).get("OutEchoReps", 0)
            out.figures["ping_counted"] = float(stats.received)
            out.lines.append(
                f"the DUT's ping: {stats.sent} sent, {stats.received} answered; the PC sent {replies} replies"
            )
            if self.snmp_before is not None and stats.received > replies:
                out.findings.append(
                    f"{s.title}: the DUT's ping counted {stats.received} replies, the PC sent {replies}: "
                    "forged replies were counted"
                )
            return
        if res is None or self.sink:
            return
        flow: FlowResult = res  # type: ignore[assignment]
        sender, receiver = flow.sender, flow.receiver
        if s.role == "client":
            dut = _fields(sender.raw)
            if (
                s.proto == "tcp"
                and "bytes" in dut
                and receiver.bytes is not None
                and (dut["bytes"] > receiver.bytes + IPERF2_FLAGS_WORD)
            ):
                out.findings.append(f"{s.title}: the DUT's client counted {dut['bytes']} bytes acknowledged, "
                                    f"the PC received {receiver.bytes}")  # fmt: skip
            if s.proto == "udp" and "server_bytes" in dut and receiver.bytes is not None and (
                    dut["server_bytes"] != receiver.bytes):  # fmt: skip
                out.findings.append(
                    f"{s.title}: the DUT's client reports the server received {dut['server_bytes']} "
                    f"bytes, the PC's server says {receiver.bytes}: a forged report was taken"
                )
            return
        if (
            s.proto == "udp"
            and receiver.bytes is not None
            and sender.bytes is not None
            and receiver.bytes > sender.bytes
        ):
            out.findings.append(
                f"{s.title}: the DUT counted {receiver.bytes} bytes received, the PC sent {sender.bytes}"
            )
        if (
            s.proto == "tcp"
            and receiver.bytes is not None
            and sender.bytes is not None
            and receiver.bytes != sender.bytes
        ):
            out.findings.append(
                f"{s.title}: the DUT's server counted {receiver.bytes} bytes, the PC sent {sender.bytes}"
            )
        if s.proto == "udp" and receiver.lost is not None and sender.bytes:
            sent_datagrams = sender.bytes // (self.flow.length or 1470) if self.flow else None
            if sent_datagrams is not None and receiver.lost > sent_datagrams:
                out.findings.append(f"{s.title}: the DUT's server reports {receiver.lost} datagrams lost of "
                                    f"{sent_datagrams} the PC sent")  # fmt: skip

    # --- always ----------------------------------------------------------------------------------
    def close(self) -> None:
        if self.answers is not None:
            self.answers.stop()
            self.answers = None
        if self.job.thread is not None and self.job.thread.is_alive():
            self.job.wait(self.flow.timeout_s if self.flow else 60)
        self.stack.close()
        for proc in self.actors:
            try:
                out, _ = proc.communicate(timeout=self.duration_s + 10)
                if out.strip():
                    self.outcome.lines.append(f"PC actor: {out.strip().splitlines()[-1]}")
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
        self.actors.clear()
        if self.echo_ignore is not None:
            subprocess.run([*self.hil.pc_side.netns_prefix, "sysctl", "-qw",
                            f"net.ipv4.icmp_echo_ignore_all={self.echo_ignore}"], check=False)  # fmt: skip
            self.echo_ignore = None


FIELD = re.compile(r"\b(bytes|server_bytes)=(\d+)")


def _fields(raw: dict[str, str]) -> dict[str, int]:
    """The byte counts of the DUT's RESULT line in its console's output (the project firmware's)."""
    for text in raw.values():
        for line in text.splitlines():
            if line.startswith("RESULT iperf"):
                return {k: int(v) for k, v in FIELD.findall(line)}
    return {}


def _pc_iface(prefix: list[str], ip: str) -> str | None:
    out = subprocess.run([*prefix, "ip", "-o", "route", "get", ip], capture_output=True, text=True, check=False)
    words = out.stdout.split()
    return words[words.index("dev") + 1] if "dev" in words[:-1] else None


def _root() -> str:
    from hil.paths import PROJECT_ROOT

    return str(PROJECT_ROOT)
