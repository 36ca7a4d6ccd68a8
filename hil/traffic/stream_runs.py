"""The stress profiles' streams run between the PC and the far end (the far end's `streams`
operation, hil.traffic.far_end): with a DUT that ends the traffic, the firmware's `stream`
command sends and counts the DUT's streams and a paced stream peer on the PC the PC's; with a DUT
in the path, a stream peer on each host (the peer host's over SSH too). Each returns every
stream's sender and receiver reports and the raw evidence."""

from __future__ import annotations

import json
import re
import threading
import time

from hil.console.driver import CommandReply, ConsoleDriver
from hil.errors import DutError
from hil.numbers import COUNT, checked_int
from hil.tools.ping import answers_ping
from hil.traffic.endpoints import HostEndpoint
from hil.traffic.roles import DutSide
from hil.traffic.streams import StreamPeerRun, StreamProfile, StreamSpec

STREAM_LINE = re.compile(r"^STREAM id=(\d+) (.*)$")
LOSS_LINE = re.compile(r"^STREAMLOSS id=(\d+) burst=(\d+) lost=(\d+)")
WORD_FIELDS = ("dir", "status")  # a STREAM line's fields that are words, not counts

Ends = dict[int, tuple[dict, dict]]  # stream id -> (its sender's report, its receiver's report)


def fields(text: str, line: str) -> dict[str, int | str]:
    """A STREAM line's `key=value` fields: the words (dir=rx) as they are, every count checked
    (hil.numbers: a malformed or implausible count is the DUT's fault, quoting the line)."""
    out: dict[str, int | str] = {}
    for key, value in (t.split("=", 1) for t in text.split() if "=" in t):
        out[key] = value if key in WORD_FIELDS else checked_int(value, COUNT, what=key, line=line)
    return out


def stream_config(send_to: str, duration_s: float, send: list[StreamSpec], receive: list[StreamSpec]) -> dict:
    return {
        "send_to": send_to,
        "duration_s": duration_s,
        "linger_s": 1.5,
        "send": [s.model_dump() for s in send],
        "receive": [s.model_dump() for s in receive],
    }


def host_peer(host: HostEndpoint, to: str, profile: StreamProfile, duration_s: float, sends: str) -> StreamPeerRun:
    """A host's stream peer: it sends the profile's `sends` streams to `to` and receives the others."""
    send = [s for s in profile.streams if s.direction == sends]
    receive = [s for s in profile.streams if s.direction != sends]
    return StreamPeerRun(host.name, host.netns_prefix, host.python, stream_config(to, duration_s, send, receive))


def _configure_console(console: ConsoleDriver, pc_ip: str, profile: StreamProfile, sends: str = "dut_tx") -> None:
    """The console's streams: it sends the profile's `sends` streams to `pc_ip` and receives the others."""
    console.run_ok("stream clear")
    for s in profile.streams:
        if s.direction == sends:
            line = f"stream add tx {s.id} {pc_ip} {s.port} {s.size} {s.burst} {s.period_ms} {s.gap_us}"
        else:
            line = f"stream add rx {s.id} {s.port} {s.size} {s.burst} {s.period_ms} {s.threshold_ms}"
        console.run_ok(line)


def streams_with_console(
    console: ConsoleDriver, dut_ip: str, pc: HostEndpoint, profile: StreamProfile, duration_s: float
) -> tuple[Ends, dict[str, str]]:
    """The DUT's console sends and counts its streams, the PC's peer the PC's. Both know each
    other's address before the first burst (the PC pings the DUT, whose lwIP learns the PC's from
    the ARP request): a DUT that had to resolve the PC first holds at most ARP_QUEUE_LEN datagrams
    of its first burst and drops the rest, a start-up effect, not the path's loss."""
    _configure_console(console, pc.ip, profile)
    answers_ping(pc.netns_prefix, dut_ip)
    with host_peer(pc, dut_ip, profile, duration_s, sends="dut_rx") as pc_peer:
        console.send(f"stream start {duration_s:g}")
        console.wait_text(r"streams running", timeout_s=10)
        pc_peer.go()
        reply = console.wait_final("stream", timeout_s=duration_s + 30)
        if not reply.final.ok or reply.final.fields.get("status") != "ok":
            raise DutError(f"DUT streams ended with {reply.final.reason or reply.final.fields}")
        pc_result = pc_peer.result(timeout_s=30)
    ends = _paired(profile, _console_reports(reply.output), pc_result, "the DUT's console or the PC's peer")
    evidence = {
        "DUT console (stream)": "\n".join(reply.output),
        "PC stream peer result": json.dumps(pc_result, indent=1),
    }
    return ends, evidence


def _console_reports(output: list[str]) -> dict[str, dict]:  # type: ignore[type-arg]
    """Each stream's report from a console's `stream` run: its STREAM line's fields, and the
    STREAMLOSS lines' lost packets by burst."""
    out: dict[str, dict] = {}  # type: ignore[type-arg]
    for line in output:
        if m := STREAM_LINE.match(line):
            out.setdefault(m.group(1), {"losses": {}}).update(fields(m.group(2), line))
        elif m := LOSS_LINE.match(line):
            lost = checked_int(m.group(3), COUNT, what="lost", line=line)
            out.setdefault(m.group(1), {"losses": {}})["losses"][m.group(2)] = lost
    return out


def _paired(profile: StreamProfile, dut: dict, other: dict, whose: str) -> Ends:  # type: ignore[type-arg]
    """Each stream's (sender's report, receiver's report): the DUT's and the other end's reports
    by stream id, the DUT sending `dut_tx`; DutError naming `whose` reports lack one."""
    ends = {}
    for s in profile.streams:
        sid = str(s.id)
        try:
            ends[s.id] = (dut[sid], other[sid]) if s.direction == "dut_tx" else (other[sid], dut[sid])
        except KeyError:
            raise DutError(f"stream {s.id}: no report from {whose}") from None
    return ends


START_DELAY_MS = 2000  # DUT to DUT: each console's senders begin this long after its `stream start`


def streams_between_consoles(
    dut: DutSide, near: DutSide, near_name: str, profile: StreamProfile, duration_s: float
) -> tuple[Ends, dict[str, str]]:
    """DUT to DUT: the DUT's console sends its streams (dut_tx) to its partner and counts the
    partner's (dut_rx), the partner's console the other way round; both senders are DUTs, so no
    loss of either is ever the bench's. Each console is started with the senders held back
    START_DELAY_MS (`stream start SECONDS DELAY_MS`): both listen before either sends. Each knows
    the other's address first (the partner pings the DUT): a DUT that had to resolve it holds at
    most ARP_QUEUE_LEN datagrams of its first burst."""
    _configure_console(dut.console, near.ip, profile, sends="dut_tx")
    _configure_console(near.console, dut.ip, profile, sends="dut_rx")
    ping = near.console.command(f"ping {dut.ip} -c 1 -W 1", timeout_s=10)
    if not ping.final.ok or ping.final.fields.get("received") in (None, "0"):
        raise DutError(f"DUT {near_name} could not ping the DUT at {dut.ip} before the streams: {ping.final.text}")
    start = f"stream start {duration_s:g} {START_DELAY_MS}"
    started = time.monotonic()
    for console in (dut.console, near.console):
        console.send(start)
    for console in (dut.console, near.console):
        console.wait_text(r"streams running", timeout_s=START_DELAY_MS / 1000)
    if time.monotonic() - started > START_DELAY_MS / 1000:
        raise DutError(f"the two consoles took more than {START_DELAY_MS} ms to start their streams")
    timeout = START_DELAY_MS / 1000 + duration_s + 30
    ended: dict[str, CommandReply] = {}
    failed: list[Exception] = []

    def wait_partner() -> None:
        try:
            ended["near"] = near.console.wait_final("stream", timeout)
        except Exception as exc:  # the partner's console died or said no more: the DUT's error names it
            failed.append(exc)

    other = threading.Thread(target=wait_partner, daemon=True)
    other.start()
    mine = dut.console.wait_final("stream", timeout_s=timeout)
    other.join(timeout=timeout)
    if "near" not in ended:
        why = f": {failed[0]}" if failed else ""
        raise DutError(f"DUT {near_name}'s console did not end its streams{why}")
    for who, reply in (("the DUT", mine), (f"DUT {near_name}", ended["near"])):
        if not reply.final.ok or reply.final.fields.get("status") != "ok":
            raise DutError(f"streams on {who} ended with {reply.final.reason or reply.final.fields}")
    own, partner = _console_reports(mine.output), _console_reports(ended["near"].output)
    ends = _paired(profile, own, partner, f"the DUT's or DUT {near_name}'s console")
    evidence = {
        "DUT console (stream)": "\n".join(mine.output),
        f"DUT {near_name} console (stream)": "\n".join(ended["near"].output),
    }
    return ends, evidence


def streams_between_hosts(
    pc: HostEndpoint, far: HostEndpoint, profile: StreamProfile, duration_s: float
) -> tuple[Ends, dict[str, str]]:
    """A DUT in the path: the PC's peer sends the downlink streams (dut_rx) to the peer host, the
    peer host's the uplink streams (dut_tx) to the PC; the DUT only forwards."""
    with (
        host_peer(pc, far.ip, profile, duration_s, sends="dut_rx") as pc_peer,
        host_peer(far, pc.ip, profile, duration_s, sends="dut_tx") as far_peer,
    ):
        pc_peer.go()
        far_peer.go()
        pc_result = pc_peer.result(timeout_s=duration_s + 30)
        peer = far_peer.result(timeout_s=30)
    ends = {}
    for s in profile.streams:
        sid = str(s.id)
        ends[s.id] = (peer[sid], pc_result[sid]) if s.direction == "dut_tx" else (pc_result[sid], peer[sid])
    evidence = {
        "PC stream peer result": json.dumps(pc_result, indent=1),
        f"{far.name} stream peer result": json.dumps(peer, indent=1),
    }
    return ends, evidence
