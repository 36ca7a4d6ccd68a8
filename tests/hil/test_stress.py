"""Stress with bursty multi-stream UDP (thesis, Network Stream Service): the patient-monitoring
and stress profiles (data files in scenarios/streams/). A DUT that ends the traffic: the
firmware's `stream` command sends and counts the DUT's streams, a precisely paced stream peer on
the PC the PC's. A DUT in the path: a stream peer on the PC and one on the peer host (over SSH,
too), the uplink streams (`dut_tx`) from the peer, the downlink (`dut_rx`) from the PC. Every
receiver reports loss, out-of-order and late packets per stream and every burst that arrived
incomplete, drawn as lost packets per burst over time. With loss injected on the link, the loss
the suite reports is compared with the frames the injector actually dropped."""

from __future__ import annotations

import json
import re
import time

import allure
import pytest

from hil.errors import DutError
from hil.numbers import COUNT, checked_int
from hil.results.recorder import make_record
from hil.scenarios.charts import timeline_chart
from hil.scenarios.sweep import attach_png, attach_text, check
from hil.session import HilContext
from hil.stats import summarize
from hil.tools.ping import answers_ping
from hil.traffic.endpoints import HostEndpoint
from hil.traffic.roles import pc_endpoint
from hil.traffic.streams import StreamPeerRun, StreamProfile, StreamSpec, load_profile

pytestmark = [pytest.mark.hil, pytest.mark.stress, pytest.mark.dut_needs("streams")]

STREAM_LINE = re.compile(r"^STREAM id=(\d+) (.*)$")
LOSS_LINE = re.compile(r"^STREAMLOSS id=(\d+) burst=(\d+) lost=(\d+)")
WORD_FIELDS = ("dir", "status")  # a STREAM line's fields that are words, not counts
INJECTED_TOLERANCE_POINTS = 0.3


def configure_dut(hil: HilContext, profile: StreamProfile) -> None:
    hil.console.run_ok("stream clear")
    for s in profile.streams:
        if s.direction == "dut_tx":
            line = f"stream add tx {s.id} {hil.pc_side.ip} {s.port} {s.size} {s.burst} {s.period_ms} {s.gap_us}"
        else:
            line = f"stream add rx {s.id} {s.port} {s.size} {s.burst} {s.period_ms} {s.threshold_ms}"
        hil.console.run_ok(line)


def fields(text: str, line: str) -> dict[str, int | str]:
    """A STREAM line's `key=value` fields: the words (dir=rx) as they are, every count checked
    (hil.numbers: a malformed or implausible count is the DUT's fault, quoting the line)."""
    out: dict[str, int | str] = {}
    for key, value in (t.split("=", 1) for t in text.split() if "=" in t):
        out[key] = value if key in WORD_FIELDS else checked_int(value, COUNT, what=key, line=line)
    return out


Ends = dict[int, tuple[dict, dict]]  # stream id -> (its sender's report, its receiver's report)


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


def run_streams_dut(hil: HilContext, profile: StreamProfile, duration_s: float) -> tuple[Ends, dict[str, str]]:
    """The DUT's console sends and counts its streams, the PC's peer the PC's. Both know each
    other's address before the first burst (the PC pings the DUT, whose lwIP learns the PC's from
    the ARP request): a DUT that had to resolve the PC first holds at most ARP_QUEUE_LEN datagrams
    of its first burst and drops the rest, a start-up effect, not the path's loss."""
    configure_dut(hil, profile)
    answers_ping(hil.pc_side.netns_prefix, hil.dut_side.ip)
    pc_host = pc_endpoint(hil.pc_side)
    with host_peer(pc_host, hil.dut_side.ip, profile, duration_s, sends="dut_rx") as pc_peer:
        hil.console.send(f"stream start {duration_s:g}")
        hil.console.wait_text(r"streams running", timeout_s=10)
        pc_peer.go()
        reply = hil.console.wait_final("stream", timeout_s=duration_s + 30)
        if not reply.final.ok or reply.final.fields.get("status") != "ok":
            raise DutError(f"DUT streams ended with {reply.final.reason or reply.final.fields}")
        pc = pc_peer.result(timeout_s=30)
    dut: dict[str, dict] = {}
    for line in reply.output:
        if m := STREAM_LINE.match(line):
            dut.setdefault(m.group(1), {"losses": {}}).update(fields(m.group(2), line))
        elif m := LOSS_LINE.match(line):
            lost = checked_int(m.group(3), COUNT, what="lost", line=line)
            dut.setdefault(m.group(1), {"losses": {}})["losses"][m.group(2)] = lost
    ends = {}
    for s in profile.streams:
        try:
            ends[s.id] = (dut[str(s.id)], pc[str(s.id)]) if s.direction == "dut_tx" else (pc[str(s.id)], dut[str(s.id)])
        except KeyError:
            raise DutError(f"stream {s.id}: no report from the DUT's console or the PC's peer") from None
    evidence = {"DUT console (stream)": "\n".join(reply.output), "PC stream peer result": json.dumps(pc, indent=1)}
    return ends, evidence


def run_streams_in_path(hil: HilContext, profile: StreamProfile, duration_s: float) -> tuple[Ends, dict[str, str]]:
    """A DUT in the path: the PC's peer sends the downlink streams (dut_rx) to the peer host, the
    peer host's the uplink streams (dut_tx) to the PC; the DUT only forwards."""
    far = hil.far_end
    assert isinstance(far, HostEndpoint)
    pc_host = pc_endpoint(hil.pc_side)
    with (
        host_peer(pc_host, far.ip, profile, duration_s, sends="dut_rx") as pc_peer,
        host_peer(far, pc_host.ip, profile, duration_s, sends="dut_tx") as far_peer,
    ):
        pc_peer.go()
        far_peer.go()
        pc = pc_peer.result(timeout_s=duration_s + 30)
        peer = far_peer.result(timeout_s=30)
    ends = {}
    for s in profile.streams:
        sid = str(s.id)
        ends[s.id] = (peer[sid], pc[sid]) if s.direction == "dut_tx" else (pc[sid], peer[sid])
    evidence = {
        "PC stream peer result": json.dumps(pc, indent=1),
        f"{far.name} stream peer result": json.dumps(peer, indent=1),
    }
    return ends, evidence


def combine(spec: StreamSpec, sender: dict, receiver: dict) -> dict:
    """One stream's numbers from its sender's and its receiver's reports.

    Both receivers (the firmware's STREAM line, the PC's stream peer) count every packet once:
    `received` is distinct packets, duplicates and packets of bursts already closed (`stale`)
    apart, so the loss is exactly sent - received; they count every lossy burst and say how many
    got no STREAMLOSS line (`losses_capped`)."""
    if "duplicates" not in receiver:
        raise DutError(
            f"stream {spec.id}: the receiver's report has no duplicates count (firmware too old?): {receiver}"
        )
    losses = {int(b): n for b, n in receiver.get("losses", {}).items()}
    sent = sender["sent"]
    # bursts the receiver never saw at the end of the test were lost entirely
    for b in range(receiver.get("last_burst", -1) + 1, sender["bursts"]):
        losses[b] = spec.burst
    lost = max(0, sent - receiver["received"])
    compressed_lossy = sorted(set(sender.get("compressed_bursts", [])) & set(losses))
    return {
        "host_sender": "compressed_bursts" in sender,  # a host's peer sent it: it reports its own pacing
        "behind": sender.get("behind", 0), "max_behind_us": sender.get("max_behind_us", 0),
        "compressed_lossy_bursts": compressed_lossy,
        "sent": sent, "received": receiver["received"], "lost": lost,
        "loss_pct": 100.0 * lost / sent if sent else 100.0, "outoforder": receiver["outoforder"],
        "late": receiver["late"], "losses": losses, "send_errors": sender.get("send_errors", 0),
        # lossy bursts, those without a STREAMLOSS line (losses_capped) included
        "lossy_bursts": len(losses) + int(receiver.get("losses_capped", 0)),
        "duplicates": receiver["duplicates"], "stale": receiver.get("stale", 0),
        "receiver_lost": receiver.get("lost"),  # in bursts 0..last_burst
        "losses_capped": receiver.get("losses_capped", 0),
    }  # fmt: skip


@pytest.mark.parametrize("profile_name", ["patient-monitoring", "stress"])
def test_stream_profile(hil: HilContext, profile_name: str) -> None:
    allure.dynamic.feature("stress: bursty multi-stream UDP")
    allure.dynamic.story(f"stress {profile_name}")
    title = f"stress-{profile_name}: stream profile {profile_name}"
    allure.dynamic.title(title)
    profile = load_profile(profile_name)
    duration = hil.profile.stream_duration_s or profile.duration_s
    scenario = f"stress-{profile.name}"
    in_path = isinstance(hil.far_end, HostEndpoint)
    drops_before = hil.topology.loss_counter()
    start = time.time()
    ends, evidence = (run_streams_in_path if in_path else run_streams_dut)(hil, profile, duration)
    drops_after = hil.topology.loss_counter()
    for name, text in evidence.items():
        attach_text(name, text)

    per_stream = {s.id: combine(s, *ends[s.id]) for s in profile.streams}
    total_sent = sum(v["sent"] for v in per_stream.values())
    total_lost = sum(v["lost"] for v in per_stream.values())
    records = []
    for spec in profile.streams:
        v = per_stream[spec.id]
        case = f"s{spec.id}-{hil.direction(spec.direction)}"
        rec = make_record(scenario, case, hil.dut.config.name, summarize([v["loss_pct"]]), None, unit="% lost")
        rec.loss_pct = v["loss_pct"]
        rec.measured.update({k: float(v[k]) for k in ("sent", "received", "lost", "outoforder", "late", "send_errors")})
        rec.measured["lossy_bursts"] = float(v["lossy_bursts"])
        rec.measured["duplicates"] = float(v["duplicates"])  # counted apart from what was received
        # packets of bursts it had closed (counted lost), its own loss total over bursts up to its
        # last, lossy bursts it printed no STREAMLOSS line for
        rec.extra.update({k: v[k] for k in ("stale", "receiver_lost", "losses_capped")})
        if v["host_sender"]:  # a host's peer sent it: how well it kept the profile's spacing
            rec.measured["generator_behind"] = float(v["behind"])
            rec.extra["generator_max_behind_us"] = v["max_behind_us"]
            # bursts the host sent compressed (it fell behind its schedule) that lost packets: the
            # generator did not send what the profile asks, so that loss is not the DUT's
            rec.extra["compressed_lossy_bursts"] = v["compressed_lossy_bursts"][:20]
            rec.generator_limited = bool(v["compressed_lossy_bursts"])
        hil.recorder.record(rec, start, time.time())
        records.append(rec)
    total_pct = 100.0 * total_lost / total_sent if total_sent else 100.0
    total = make_record(scenario, "all", hil.dut.config.name, summarize([total_pct]), None, unit="% lost")
    total.loss_pct = total_pct
    total.measured.update(
        sent=float(total_sent),
        lost=float(total_lost),
        late=float(sum(v["late"] for v in per_stream.values())),
        outoforder=float(sum(v["outoforder"] for v in per_stream.values())),
    )
    total.measured["duplicates"] = float(sum(v["duplicates"] for v in per_stream.values()))
    total.extra.update(duration_s=duration)
    total.traffic_s = duration  # the streams ran at once: the total carries their traffic time
    total.generator_limited = any(r.generator_limited for r in records)
    injected_pct = None
    if drops_before is not None and drops_after is not None:
        injected_pct = 100.0 * (drops_after - drops_before) / total_sent if total_sent else 0.0
        total.extra.update(injected_drops=drops_after - drops_before, injected_pct=round(injected_pct, 4))
    hil.recorder.record(total, start, time.time())
    records.append(total)

    lines = [
        f"{'stream':>8s} {'dir':>8s} {'sent':>7s} {'recv':>7s} {'lost':>6s} {'loss %':>8s} {'ooo':>5s} {'late':>5s}"
        "  host sender behind schedule (packets, worst us)"
    ]
    for spec in profile.streams:
        v = per_stream[spec.id]
        lines.append(
            f"{spec.id:8d} {hil.direction(spec.direction):>8s} {v['sent']:7d} {v['received']:7d} {v['lost']:6d} "
            f"{v['loss_pct']:8.4f} {v['outoforder']:5d} {v['late']:5d}"
            + (f"  {v['behind']}, {v['max_behind_us']}" if v["host_sender"] else "")
        )
    lines.append(f"total: {total_lost} of {total_sent} lost ({total_pct:.4f} %) in {duration:g} s")
    if injected_pct is not None:
        lines.append(f"injected on the link: {drops_after - drops_before} frames dropped ({injected_pct:.4f} %)")
    attach_text("streams", "\n".join(lines))
    series, totals = {}, {}  # totals: (lost, sent) per stream: a stream without loss is a line of text
    for spec in profile.streams:
        losses = per_stream[spec.id]["losses"]
        bursts = max(1, per_stream[spec.id]["sent"] // spec.burst)
        name = f"stream {spec.id} ({hil.direction(spec.direction)}, {spec.size} B x {spec.burst} / {spec.period_ms} ms)"
        series[name] = [(b * spec.period_ms / 1000.0, float(losses.get(b, 0))) for b in range(bursts)]
        totals[name] = (per_stream[spec.id]["lost"], per_stream[spec.id]["sent"])
    attach_png(
        "lost packets per burst", timeline_chart(f"{profile.name}: lost packets per burst", series, "lost", totals)
    )

    if injected_pct is not None:
        diff = abs(total_pct - injected_pct)
        assert diff <= INJECTED_TOLERANCE_POINTS, (
            f"BENCH FAULT: reported loss {total_pct:.3f} % differs from the injected {injected_pct:.3f} % "
            f"by {diff:.3f} points (> {INJECTED_TOLERANCE_POINTS})"
        )
    # loss, late and out-of-order packets: the profile's max_loss_pct, max_late, ...
    check(hil, scenario, records, title=title)
