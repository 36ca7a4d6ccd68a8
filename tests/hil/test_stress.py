"""Stress with bursty multi-stream UDP (thesis, Network Stream Service): the patient-monitoring
and stress profiles (data files in scenarios/streams/). The firmware's `stream` command sends
and counts the DUT's streams, a precisely paced peer in the PC namespace the PC's; both report
loss, out-of-order and late packets per stream and every burst that arrived incomplete, drawn as
lost packets per burst over time. With loss injected on the link, the loss the suite reports is
compared with the frames the injector actually dropped."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import allure
import pytest

from hil.errors import BenchError, DutError
from hil.paths import PROJECT_ROOT
from hil.results.recorder import make_record
from hil.scenarios.charts import timeline_chart
from hil.scenarios.sweep import attach_png, attach_text, check
from hil.session import HilContext
from hil.stats import summarize
from hil.traffic.streams import StreamProfile, StreamSpec, load_profile

pytestmark = [pytest.mark.hil, pytest.mark.stress, pytest.mark.dut_endpoint]

STREAM_LINE = re.compile(r"^STREAM id=(\d+) (.*)$")
LOSS_LINE = re.compile(r"^STREAMLOSS id=(\d+) burst=(\d+) lost=(\d+)")
INJECTED_TOLERANCE_POINTS = 0.3


def configure_dut(hil: HilContext, profile: StreamProfile) -> None:
    hil.console.run_ok("stream clear")
    for s in profile.streams:
        if s.direction == "dut_tx":
            line = f"stream add tx {s.id} {hil.pc_side.ip} {s.port} {s.size} {s.burst} {s.period_ms} {s.gap_us}"
        else:
            line = f"stream add rx {s.id} {s.port} {s.size} {s.burst} {s.period_ms} {s.threshold_ms}"
        hil.console.run_ok(line)


def fields(text: str) -> dict[str, int | str]:
    out: dict[str, int | str] = {}
    for key, value in (t.split("=", 1) for t in text.split()):
        out[key] = int(value) if value.isdigit() else value
    return out


def run_streams(hil: HilContext, profile: StreamProfile, duration_s: float) -> tuple[dict, list[str], dict]:
    config = {
        "dut_ip": hil.dut_side.ip,
        "duration_s": duration_s,
        "linger_s": 1.5,
        "send": [s.model_dump() for s in profile.streams if s.direction == "dut_rx"],
        "receive": [s.model_dump() for s in profile.streams if s.direction == "dut_tx"],
    }
    argv = [*hil.pc_side.netns_prefix, sys.executable, "-m", "hil.traffic.streams"]
    peer = subprocess.Popen(argv, cwd=PROJECT_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert peer.stdin is not None and peer.stdout is not None
    try:
        peer.stdin.write(json.dumps(config) + "\n")
        peer.stdin.flush()
        if peer.stdout.readline().strip() != "ready":
            raise BenchError("the PC stream peer did not start")
        hil.console.send(f"stream start {duration_s:g}")
        hil.console.wait_text(r"streams running", timeout_s=10)
        peer.stdin.write("go\n")
        peer.stdin.flush()
        reply = hil.console.wait_final("stream", timeout_s=duration_s + 30)
        if not reply.final.ok or reply.final.fields.get("status") != "ok":
            raise DutError(f"DUT streams ended with {reply.final.reason or reply.final.fields}")
        out, _ = peer.communicate(timeout=duration_s + 30)
    finally:
        if peer.poll() is None:
            peer.kill()
            peer.wait()
    try:
        pc = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise BenchError(f"the PC stream peer printed no result: {out[-200:]}") from None
    dut: dict[str, dict] = {}
    for line in reply.output:
        if m := STREAM_LINE.match(line):
            dut[m.group(1)] = fields(m.group(2))
        elif m := LOSS_LINE.match(line):
            dut.setdefault(f"loss{m.group(1)}", {})[m.group(2)] = int(m.group(3))
    return pc, reply.output, dut


def combine(spec: StreamSpec, pc: dict, dut: dict) -> dict:
    sid = str(spec.id)
    if spec.direction == "dut_tx":
        sender, receiver = dut[sid], pc[sid]
        losses = {int(b): n for b, n in receiver["losses"].items()}
    else:
        sender, receiver = pc[sid], dut[sid]
        losses = {int(b): n for b, n in dut.get(f"loss{sid}", {}).items()}
    sent = sender["sent"]
    # bursts the receiver never saw at the end of the test were lost entirely
    for b in range(receiver.get("last_burst", -1) + 1, sender["bursts"]):
        losses[b] = spec.burst
    lost = max(0, sent - receiver["received"] + receiver["outoforder"])
    compressed_lossy = sorted(set(sender.get("compressed_bursts", [])) & set(losses))
    return {
        "behind": sender.get("behind", 0), "max_behind_us": sender.get("max_behind_us", 0),
        "compressed_lossy_bursts": compressed_lossy,
        "sent": sent, "received": receiver["received"], "lost": lost,
        "loss_pct": 100.0 * lost / sent if sent else 100.0, "outoforder": receiver["outoforder"],
        "late": receiver["late"], "losses": losses, "send_errors": sender.get("send_errors", 0),
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
    configure_dut(hil, profile)
    drops_before = hil.topology.loss_counter()
    start = time.time()
    pc, dut_lines, dut = run_streams(hil, profile, duration)
    drops_after = hil.topology.loss_counter()
    attach_text("DUT console (stream)", "\n".join(dut_lines))
    attach_text("PC stream peer result", json.dumps(pc, indent=1))

    per_stream = {s.id: combine(s, pc, dut) for s in profile.streams}
    total_sent = sum(v["sent"] for v in per_stream.values())
    total_lost = sum(v["lost"] for v in per_stream.values())
    records = []
    for spec in profile.streams:
        v = per_stream[spec.id]
        rec = make_record(scenario, f"s{spec.id}-{spec.direction}", hil.dut.config.name, summarize([v["loss_pct"]]),
                          None, unit="% lost")  # fmt: skip
        rec.loss_pct = v["loss_pct"]
        rec.measured.update({k: float(v[k]) for k in ("sent", "received", "lost", "outoforder", "late", "send_errors")})
        rec.measured["lossy_bursts"] = float(len(v["losses"]))
        if spec.direction == "dut_rx":  # the PC sends: how well it kept the profile's spacing
            rec.measured["generator_behind"] = float(v["behind"])
            rec.extra["generator_max_behind_us"] = v["max_behind_us"]
            # bursts the PC sent compressed (it fell behind its schedule) that lost packets: the
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
        f"{'stream':>8s} {'dir':>7s} {'sent':>7s} {'recv':>7s} {'lost':>6s} {'loss %':>8s} {'ooo':>5s} {'late':>5s}"
        "  PC sender behind schedule (packets, worst us)"
    ]
    for spec in profile.streams:
        v = per_stream[spec.id]
        lines.append(
            f"{spec.id:8d} {spec.direction:>7s} {v['sent']:7d} {v['received']:7d} {v['lost']:6d} "
            f"{v['loss_pct']:8.4f} {v['outoforder']:5d} {v['late']:5d}"
            + (f"  {v['behind']}, {v['max_behind_us']}" if spec.direction == "dut_rx" else "")
        )
    lines.append(f"total: {total_lost} of {total_sent} lost ({total_pct:.4f} %) in {duration:g} s")
    if injected_pct is not None:
        lines.append(f"injected on the link: {drops_after - drops_before} frames dropped ({injected_pct:.4f} %)")
    attach_text("streams", "\n".join(lines))
    series, totals = {}, {}  # totals: (lost, sent) per stream: a stream without loss is a line of text
    for spec in profile.streams:
        losses = per_stream[spec.id]["losses"]
        bursts = max(1, per_stream[spec.id]["sent"] // spec.burst)
        name = f"stream {spec.id} ({spec.direction}, {spec.size} B x {spec.burst} / {spec.period_ms} ms)"
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
