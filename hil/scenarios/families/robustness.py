"""Robustness: hostile and malformed traffic at the DUT, one class of frames per case
(hil.robustness.classes: IPv4 header faults, fragments, TCP, UDP, ICMP, ARP, Ethernet, scapy's
fuzz()), then proof that the DUT still works.

Each case (`robustness/<class>`):
1. writes the class's frames to a PCAP (the results folder's `robustness/<class>.pcap`) and sends
   them from the PC's interface at the profile's rate (hil.robustness.send), with the counters of
   every hop and the DUT's own read before and after;
2. the DUT must still be running: a DUT that died (the host firmware's ASan/UBSan build aborts on
   any memory error) fails the case as a DUT fault naming the sanitizer's report, with the frames
   attached and the command that replays them (`./suite replay`);
3. it must answer ping again (the PC first forgets the target's link address, so its next ARP
   request repairs an entry the class poisoned: a DUT that ignores a genuine ARP request fails);
4. its pools and heap must be back at their idle level within a few seconds (the reassembly of
   fragments that never complete is freed after IP_REASS_MAXAGE), where its console reports them;
5. a short TCP run must meet the case's limits (by default a quarter of the link's theoretical
   goodput: a DUT that carries traffic, not a rate);
6. behind a DUT in the path, the peer must see none of the frames to IEEE 802.1D's reserved group
   addresses 01:80:C2:00:00:01 ... 0F (a bridge never forwards them; spanning-tree BPDUs, to ...00,
   a bridge that runs no spanning tree forwards).
What the DUT dropped (its lwIP counters: link, ARP, IP, ICMP, UDP, TCP), the hops' counters and the
recovery are recorded with every case; the last class carries the table of all of them.

Where it runs: the virtual bench flashes the host firmware's sanitizer build (`asan`; another with
--robustness-build, e.g. `planted`, the build with a defect planted for the family's self-test);
QEMU and boards their own image; a DUT in the path (the firmware bridge, a black box) forwards the
frames to the peer and must keep forwarding. Hostile frames leave only the namespaces a virtual
bench made: a real bench's DUT network must be declared isolated (`network.isolated: true`), or
the family does not run there.

--robustness-classes, --robustness-packets, --robustness-rate and --robustness-build override the
profile's classes, packet counts (per class), rate and build; --replay FILE replaces the classes by
one case sending that PCAP's frames.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import allure
from scapy.utils import RawPcapReader, RawPcapWriter

from hil.checks import criteria
from hil.errors import BenchError, DutError
from hil.paths import PROJECT_ROOT
from hil.robustness.classes import CLASSES, Ends, Frame, build, is_reserved_group
from hil.robustness.live import Live, PinnedNeighbour
from hil.robustness.send import ETHERNET, read_frames
from hil.robustness.serve import SERVE_S, Served, normal, serve
from hil.robustness.service_classes import IN_PATH_ONLY
from hil.robustness.states import STATES, RunningState, StateOutcome, applies
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.families.sweeps import Axis, axis_points
from hil.scenarios.metrics import IPERF3, THROUGHPUT, ScenarioShape
from hil.scenarios.sweep import Point, attach_text, check, confirm_miss, measure
from hil.step_clock import timed
from hil.theory import tcp_goodput_mbps
from hil.tools.ping import ping_argv
from hil.traffic.roles import TrafficSpec
from hil.wire.capture import SNAP_LEN, Capture, CaptureUnavailable, run_dir

if TYPE_CHECKING:
    from hil.results.recorder import CaseRecord
    from hil.session import HilContext

SCENARIO = "robustness"
SEED = 20261127
RATES = {"quick": 2000.0, "full": 5000.0}  # frames per second
SANITIZER_BUILD = "asan"  # the host firmware's ASan/UBSan build (firmware/CMakePresets.json host-asan)
RECOVERY_TCP_S = 1.0  # the short TCP run after each class
PING_BACK_S = 10.0  # how long the PC pings for the DUT's first answer after a class
SERVE_BOUND_MS = 1000.0  # the real clients' wait beyond their normal time (threshold max_serve_delay_ms)
SERVE_GIVE_UP_S = 15.0  # a real client not served this long after the class is not served
IDLE_CONNECTIONS = 8  # the exhaust class's silent connections to a listening TCP server
SETTLE_S = 8.0  # how long the DUT's pools may take to return to their idle level (reassembly: 2-3 s)
SETTLE_POLL_S = 0.05  # between two readings of them (a `stats` round trip: a few ms): the time it took, to 50 ms
NOT_ISOLATED = (
    "the robustness family sends hostile frames: only to a DUT whose network the bench file declares isolated "
    "(network.isolated: true; the virtual benches' namespaces are by construction)"
)
# a DUT in the path keeps forwarding only as a build of its bench file's configuration: `<config>` or
# `<config>-<build>` (the bridge's ASan/UBSan build: bridge-asan, preset host-bridge-asan)
IN_PATH_OWN_BUILD = "a DUT in the path flashes only builds of its bench file's configuration ({configs})"
METRICS = (
    THROUGHPUT
    | IPERF3
    | {
        "frames_sent",
        "frames_refused",
        "dut_dropped",
        "ping_recovery_ms",
        "pools_held",
        "heap_held_bytes",
        "settle_ms",
        "forbidden_forwarded",
        "frames_at_peer",
        "serve_delay_ms",
        "state_delay_ms",
    }
)
PROTOCOLS = ("link", "etharp", "ip", "ipfrag", "icmp", "udp", "tcp")  # lwIP's counters in the DUT's `stats`
DROP_KEYS = re.compile(rf"^({'|'.join(PROTOCOLS)})_(drop|chkerr|memerr|err)$")
DROP_KEY = re.compile(rf"^({'|'.join(PROTOCOLS)})_drop$")  # what `dut_dropped` sums
# the frames attached on their own as the last a DUT received before it stopped: those of the
# last half second (a sanitizer takes tens of milliseconds to write its report and exit), at least 50
LAST_SECONDS, LAST_FRAMES = 0.5, 50
STACK_FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ in (\S+) (\S+)")
SANITIZER_LINE = re.compile(r"(ERROR: AddressSanitizer|runtime error:|SUMMARY: |LeakSanitizer|#\d+ 0x[0-9a-f]+ in )")


def _names(text: str) -> tuple[object, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in CLASSES]
    if not names or unknown:
        raise ValueError(f"--robustness-classes takes names of {', '.join(CLASSES)} (got {text!r})")
    return tuple(dict.fromkeys(names))


def _one_int(option: str, lo: int, hi: int) -> Callable[[str], tuple[object, ...]]:
    def parse(text: str) -> tuple[object, ...]:
        if not text.isdigit() or not lo <= int(text) <= hi:
            raise ValueError(f"{option} takes one whole number in {lo}..{hi} (got {text!r})")
        return (int(text),)

    return parse


def _state_names(text: str) -> tuple[object, ...]:
    """STATE (every class in it) or CLASS@STATE (that class only) entries, comma-separated."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())

    def known(entry: str) -> bool:
        cls, at, state = entry.rpartition("@")
        return state in STATES and (not at or cls in CLASSES)

    if not names or not all(known(n) for n in names):
        raise ValueError(f"--robustness-states takes STATE or CLASS@STATE entries, states: {', '.join(STATES)}; "
                         f"classes: {', '.join(CLASSES)} (got {text!r})")  # fmt: skip
    return tuple(dict.fromkeys(names))


def _build_name(text: str) -> tuple[object, ...]:
    if not re.fullmatch(r"[a-z][a-z0-9_]*(-[a-z0-9_]+)*", text):
        raise ValueError(f"--robustness-build takes a build configuration name, e.g. asan, bridge-asan (got {text!r})")
    return (text,)


def _pcap(text: str) -> tuple[object, ...]:
    path = Path(text)
    if not path.is_file():
        raise ValueError(f"--replay: no file {text}")
    try:
        frames = read_frames(path)
    except Exception as exc:  # scapy raises its own Scapy_Exception for a file that is not a PCAP
        raise ValueError(f"--replay: {text} is not a PCAP file of Ethernet frames ({exc})") from None
    if not frames:
        raise ValueError(f"--replay: {text} holds no frame")
    return (str(path.resolve()),)


CLASS_AXIS = Axis(
    "robustness_classes",
    {"quick": tuple(CLASSES), "full": tuple(CLASSES)},
    "--robustness-classes",
    f"classes of hostile frames, e.g. ipv4,tcp (of {', '.join(CLASSES)})",
    _names,
    str,
    lambda v: 0.0,
    "class",
)
STATE_AXIS = Axis(
    "robustness_states",
    {"quick": (), "full": ()},
    "--robustness-states",
    "the DUT's service states each robustness class is sent in (default: every state the bench's DUT can be "
    f"put in), e.g. idle,tcp_server; CLASS@STATE adds one class in one state, e.g. exhaust@tcp_server "
    f"(states: {', '.join(STATES)})",
    _state_names,
    str,
    lambda v: 0.0,
    "state",
)
PACKETS_AXIS = Axis(
    "robustness_packets",
    {"quick": (), "full": ()},
    "--robustness-packets",
    "frames of every robustness class (default: each class's own count for the profile)",
    _one_int("--robustness-packets", 1, 1_000_000),
    str,
    float,
    "frames",
)
RATE_AXIS = Axis(
    "robustness_rate",
    {"quick": (RATES["quick"],), "full": (RATES["full"],)},
    "--robustness-rate",
    "frames per second of the robustness classes",
    _one_int("--robustness-rate", 1, 100_000),
    str,
    float,
    "frames/s",
)
BUILD_AXIS = Axis(
    "robustness_build",
    {"quick": (SANITIZER_BUILD,), "full": (SANITIZER_BUILD,)},
    "--robustness-build",
    "the firmware build the robustness family flashes where the DUT's kind has it "
    "(default asan: the host firmware's ASan/UBSan build)",
    _build_name,
    str,
    lambda v: 0.0,
    "build",
)
REPLAY_AXIS = Axis(
    "robustness_replay",
    {"quick": (), "full": ()},
    "--replay",
    "a PCAP of frames to send at the DUT instead of the robustness classes (one case, robustness/replay)",
    _pcap,
    lambda v: "replay",
    lambda v: 0.0,
    "file",
)


@dataclass(frozen=True)
class RobustnessPoint:
    name: str  # a class of hil.robustness.classes, or "replay"
    count: int | None  # frames (None: a replay's file has its own)
    pps: float
    build: str | None  # the build configuration flashed first (None: the bench's own)
    replay: str | None = None  # the PCAP a replay sends
    last: bool = False  # the last case: it carries the table of every class
    state: str = "idle"  # the service state the class is sent in (hil.robustness.states)

    @property
    def key(self) -> str:
        """The case's key: `<class>` in the idle state, `<class>@<state>` in another."""
        return self.name if self.state == "idle" else f"{self.name}@{self.state}"


@register
class Robustness:
    name = "robustness (hostile and malformed traffic)"
    marker = "robustness"
    marker_doc = (
        "hostile and malformed frames at the DUT, class by class (IPv4, fragments, TCP, UDP, ICMP, ARP, Ethernet, "
        "fuzz); after each the DUT must answer, its pools be back at idle and a short TCP run meet its limits"
    )
    shapes = (ScenarioShape(SCENARIO, f"({'|'.join([*CLASSES, 'replay'])})(@({'|'.join(STATES)}))?", METRICS, "ipv4"),)
    default_limits: ClassVar = {SCENARIO: {"default": {"max_ping_recovery_ms": 5000, "min_efficiency_pct": 25,
                                                       "max_serve_delay_ms": SERVE_BOUND_MS}}}  # fmt: skip
    axes = (CLASS_AXIS, STATE_AXIS, PACKETS_AXIS, RATE_AXIS, BUILD_AXIS, REPLAY_AXIS)

    def cases(self, bench: BenchFacts) -> list[Case]:
        profile = bench.profile
        skip = None if bench.local or bench.isolated else NOT_ISOLATED
        build, why_not_build = _build_for(bench)
        skip = skip or why_not_build
        pps = float(axis_points(RATE_AXIS, profile)[0])  # type: ignore[arg-type]
        own = build is not None
        entries = [str(n) for n in axis_points(STATE_AXIS, profile)]
        named_states = [e for e in entries if "@" not in e]
        only = [tuple(e.split("@")) for e in entries if "@" in e]  # CLASS@STATE: that class in that state
        has_console = bench.dialect is not None
        possible = [n for n, st in STATES.items() if applies(st, bench.in_path, has_console) is None]
        states = named_states or ([] if only else possible)
        if replay := axis_points(REPLAY_AXIS, profile):
            state = (named_states or [p[1] for p in only] or ["idle"])[0] if entries else "idle"
            point = RobustnessPoint("replay", None, pps, build, str(replay[0]), last=True, state=state)
            why = applies(STATES[state], bench.in_path, has_console)
            return [Case(self, f"{SCENARIO}/{point.key}", point, skip=skip or why, own_builds=own)]
        named_classes = "robustness_classes" in profile.sweeps
        names = [str(n) for n in axis_points(CLASS_AXIS, profile)]
        if not named_classes and not bench.in_path:
            names = [n for n in names if n not in IN_PATH_ONLY]
        packets = axis_points(PACKETS_AXIS, profile)
        out = []
        pairs = [(n, st) for n in names for st in states]
        pairs += [(c, st) for c, st in only if (c, st) not in pairs and (c in names or not named_classes)]
        for i, (name, state) in enumerate(pairs):
            count = int(packets[0]) if packets else CLASSES[name].counts[profile.points_name]  # type: ignore[call-overload]
            point = RobustnessPoint(name, count, pps, build, last=i == len(pairs) - 1, state=state)
            why = applies(STATES[state], bench.in_path, has_console)
            if name in IN_PATH_ONLY and not bench.in_path:
                why = why or f"class {name}: a DUT that bridges nothing has no address table to attack"
            out.append(Case(self, f"{SCENARIO}/{point.key}", point, skip=skip or why, own_builds=own))
        return out

    def run(self, hil: HilContext, case: Case) -> None:
        run_class(hil, case.point)  # type: ignore[arg-type]


def _build_for(bench: BenchFacts) -> tuple[str | None, str | None]:
    """The build the family flashes (None: the bench's own) and why it cannot run when a build
    named on the command line is not the DUT's kind's."""
    wanted = str(axis_points(BUILD_AXIS, bench.profile)[0])
    named = "robustness_build" in bench.profile.sweeps
    available = {config for config, _ in bench.builds}
    if bench.in_path:  # the sanitizer build of the bench file's own configuration (bridge -> bridge-asan)
        for config in bench.own_configs:
            for build in (f"{config}-{wanted}", wanted):
                if (build == config or build.startswith(f"{config}-")) and build in available:
                    return build, None
        if named:
            listed = " or ".join(f"{c}, {c}-<build>" for c in bench.own_configs) or "none declared"
            return None, f"--robustness-build {wanted}: " + IN_PATH_OWN_BUILD.format(configs=listed)
        return None, None
    if wanted in available:
        return wanted, None
    if named:
        return None, f"--robustness-build {wanted}: DUT kind {bench.kind!r} declares no such build"
    return None, None  # e.g. QEMU, a board: its own image


@dataclass(frozen=True)
class PcInterface:
    prefix: list[str]
    iface: str
    mac: str


def _run(argv: list[str], what: str, timeout_s: float = 10) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False, cwd=PROJECT_ROOT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BenchError(f"{what}: {' '.join(argv)}: {exc}") from None
    if proc.returncode != 0:
        raise BenchError(f"{what}: {' '.join(argv)}: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return proc.stdout


def _quiet(argv: list[str], timeout_s: float = 10) -> bool:
    """Runs a command whose failure is an answer (a ping unanswered), True when it succeeded."""
    try:
        return subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def pc_side(hil: HilContext) -> PcInterface:
    """The PC's interface toward the DUT (the one its kernel routes the target through) and its MAC."""
    prefix = hil.pc_side.netns_prefix
    words = _run([*prefix, "ip", "-o", "route", "get", hil.far_end.ip], "no route to the target").split()
    if "dev" not in words[:-1]:
        raise BenchError(f"the PC has no interface toward {hil.far_end.ip}: {' '.join(words)}")
    iface = words[words.index("dev") + 1]
    link = json.loads(_run([*prefix, "ip", "-j", "link", "show", "dev", iface], "cannot read the PC's interface"))
    return PcInterface(prefix, iface, str(link[0]["address"]))


def target_mac(pc: PcInterface, ip: str) -> str:
    """The target's link address as the PC's neighbour table has it after a ping."""
    _quiet(ping_argv(pc.prefix, ip, count=1, wait_s=1))
    neigh = json.loads(_run([*pc.prefix, "ip", "-j", "neigh", "show", ip, "dev", pc.iface], "no neighbour entry"))
    macs = [str(n["lladdr"]) for n in neigh if n.get("lladdr")]
    if not macs:
        raise DutError(f"the target {ip} does not answer ARP from the PC before any hostile frame was sent")
    return macs[0]


def write_pcap(path: Path, frames: list[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with RawPcapWriter(str(path), linktype=ETHERNET) as w:  # type: ignore[no-untyped-call]
        w.write_header(None)  # type: ignore[no-untyped-call]
        for i, data in enumerate(frames):  # a millisecond apart: the order they are sent in
            w.write_packet(data, sec=i // 1000, usec=(i % 1000) * 1000)  # type: ignore[no-untyped-call]


def send_frames(hil: HilContext, pc: PcInterface, pcap: Path, point: RobustnessPoint, frames: int) -> dict[str, object]:
    """Sends the PCAP's frames from the PC's interface (in its namespace) and returns what was
    sent; a DUT program on the bench PC is watched: the sending stops when it has exited. Fewer
    frames on the wire than in the file, other than those the interface refused as too large and
    those after the DUT stopped, is the bench's fault."""
    argv = [*pc.prefix, sys.executable, "-m", "hil.robustness.send", "--iface", pc.iface, "--pcap", str(pcap),
            "--pps", f"{point.pps:g}"]  # fmt: skip
    if (pid := hil.dut.adapter.pid) is not None:
        argv += ["--watch-pid", str(pid)]
    out = _run(argv, "the hostile-frame sender failed", 30 + 2 * frames / point.pps)
    try:
        sent = dict(json.loads(out.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        raise BenchError(f"the hostile-frame sender said no result: {out[-300:]!r}") from None
    stopped = sent.get("stopped_at")
    expected = stopped if isinstance(stopped, int) else frames
    if int(sent["sent"]) + int(sent["refused_mtu"]) < expected:
        raise BenchError(f"the hostile-frame sender put {sent['sent']} of {expected} frames on {pc.iface}: {sent}")
    return sent


@contextlib.contextmanager
def peer_capture(hil: HilContext, key: str, frames: list[Frame]) -> Iterator[list[tuple[int, int]]]:
    """Behind a DUT in the path: what reached the peer while the class was sent, as `_at_peer`
    counts it (nothing when the bench has no peer interface to capture: the case says so); the
    capture's files are removed whatever happens."""
    found: list[tuple[int, int]] = []
    point = next((p for p in (hil.wire.points if hil.wire else []) if p.side == "peer"), None)
    if point is None:
        yield found
        return
    cap = Capture(list(point.prefix), point.iface, run_dir() / f"robustness-{key}-peer.pcap", 200_000)
    try:
        cap.start()
    except (CaptureUnavailable, OSError) as exc:
        attach_text("the peer's capture", f"not captured, nothing checked at the peer: {exc}")
        yield found
        return
    try:
        yield found
    finally:
        cap.stop()
        try:
            found.append(_at_peer(cap.path, frames))
        except Exception as exc:  # scapy's own Scapy_Exception for a file tcpdump left unreadable
            attach_text("the peer's capture", f"unreadable, nothing checked at the peer: {exc}")
        finally:
            cap.remove()


def pools_used(counters: dict[str, int] | None) -> dict[str, int] | None:
    """The DUT's pools and heap in use (`pool_<NAME>_used`, `heap_used`); None: not reported."""
    if not counters:
        return None
    used = {
        k.removeprefix("pool_").removesuffix("_used"): v
        for k, v in counters.items()
        if k.startswith("pool_") and k.endswith("_used")
    }
    if not used:
        return None
    if "heap_used" in counters:
        used["heap"] = counters["heap_used"]
    if counters.get("tcp_time_wait"):  # closed connections waiting out 2 MSL (TCP's own rule; the first
        # pcbs lwIP takes back), and lwIP's TCP timer, one sys_timeout that runs while any pcb exists
        if "TCP_PCB" in used:
            used["TCP_PCB"] -= counters["tcp_time_wait"]
        if "SYS_TIMEOUT" in used:
            used["SYS_TIMEOUT"] -= 1
    return used


def held(idle: dict[str, int], now: dict[str, int]) -> dict[str, int]:
    """What is still in use beyond the idle level, by pool (heap in bytes)."""
    return {k: now[k] - v for k, v in idle.items() if k in now and now[k] > v}


def sanitizer_report(log: str) -> str | None:
    """The sanitizer's report in a DUT program's log (its error line and first frames), None when none."""
    lines = [ln.strip() for ln in log.splitlines() if SANITIZER_LINE.search(ln)]
    return "\n".join(lines[:8]) if lines else None


def replay_command(hil: HilContext, pcap: Path, point: RobustnessPoint) -> str:
    where, bench = (p.relative_to(PROJECT_ROOT) if p.is_absolute() and p.is_relative_to(PROJECT_ROOT) else p
                    for p in (pcap, Path(hil.bench_file)))  # fmt: skip
    build = f" --robustness-build {point.build}" if point.build not in (None, SANITIZER_BUILD) else ""
    dut = f" --dut-name {shlex.quote(hil.dut.config.name)}"
    state = f" --robustness-states {point.state}" if point.state != "idle" else ""
    return (f"sudo ./suite replay {shlex.quote(str(where))} --bench {shlex.quote(str(bench))}{dut}{build}{state} "
            f"--robustness-rate {point.pps:g}")  # fmt: skip


def _ends(hil: HilContext, pc: PcInterface, ends_ip: str, live: Live | None = None) -> Ends:
    net = hil.dut.config.network
    return Ends(pc.mac, hil.pc_side.ip, target_mac(pc, ends_ip), ends_ip, net.prefix_len, dut_ip=net.dut_ip,
                dut_mac=getattr(net, "dut_mac", None), live=live)  # fmt: skip


def _frames_of(point: RobustnessPoint, hil: HilContext, pc: PcInterface, ends_ip: str,
               live: Live | None = None) -> tuple[list[Frame], str]:  # fmt: skip
    if point.replay is not None:
        frames = [Frame("replayed", f) for f in read_frames(Path(point.replay))]
        return frames, f"the frames of {point.replay}"
    cls = CLASSES[point.name]
    assert point.count is not None
    return build(cls, _ends(hil, pc, ends_ip, live), point.count, SEED), cls.title


LIVE_CLASSES = frozenset({"forged"})  # classes whose frames aim at the state's live connection


@dataclass
class ClassRun:
    """One class's run so far: what a fault message and the evidence need."""

    key: str
    point: RobustnessPoint
    pcap: Path
    frames: list[Frame]
    sent: dict[str, object] | None = None
    attached: bool = False  # its frames are attached to the case

    def replay(self, hil: HilContext) -> str:
        return replay_command(hil, self.pcap, self.point)


def run_class(hil: HilContext, point: RobustnessPoint) -> None:
    key = point.key
    limits = hil.thresholds.limits(SCENARIO, key)  # none: an error before any frame is sent
    bound_ms = float(_limit(limits, "max_serve_delay_ms", SERVE_BOUND_MS))
    state = STATES[point.state]
    allure.dynamic.feature(Robustness.name)
    allure.dynamic.story(f"robustness: {point.name}")
    allure.dynamic.parameter("state", state.title)
    if point.build is not None:  # a fresh DUT for every class: a crash's replay starts from the same state
        with timed("flash"):
            hil.flash_config(point.build)
    allure.dynamic.parameter("build", hil.dut.adapter.current_config or "the bench file's")
    with timed("robustness: the clients' normal time"):
        normal_s = normal(hil, SERVE_GIVE_UP_S)  # the real clients' normal times on this bench (once per run)
    pc, target = pc_side(hil), hil.far_end.ip
    frames, title = _frames_of(point, hil, pc, target)
    run = ClassRun(key, point, hil.recorder.results_dir / "robustness" / f"{key}.pcap", frames)
    window = hil.wire.window(sides=()) if hil.wire is not None else None
    before = window.before.get("dut") if window is not None else hil.dut.counters(mark=True)
    idle = pools_used(before)
    class_s = len(frames) / point.pps
    exhaust = point.name == "exhaust"
    running = RunningState(hil, state, class_s, bound_ms, max(normal_s) - SERVE_S, sink=exhaust,
                           idle_connections=IDLE_CONNECTIONS if exhaust else 0)  # fmt: skip
    try:
        try:
            with timed("robustness: the state started"):
                running.start()
        except (DutError, BenchError) as exc:
            raise DutError(f"robustness/{key}: the DUT could not be put in its state ({state.title}) before any "
                           f"hostile frame: {exc}") from exc  # fmt: skip
        if running.live is not None and point.name in LIVE_CLASSES and point.replay is None:
            frames, title = _frames_of(point, hil, pc, target, running.live)
            run.frames = frames
        _write_class(run, point, title, target, pc)
        pin = (PinnedNeighbour(hil.far_end.netns_prefix, hil.pc_side.ip, pc.mac)  # type: ignore[attr-defined]
               if hil.far_end.behind_dut else contextlib.nullcontext())  # fmt: skip
        with pin, peer_capture(hil, key, frames) as at_peer:
            running.during()
            with timed("traffic"):
                run.sent = send_frames(hil, pc, run.pcap, point, len(frames))
            last_frame_at = time.monotonic()
        with timed("robustness: the state's end (the DUT's own)"):
            outcome = running.finish(last_frame_at)
            running.close()
        peer_seen = at_peer[0] if at_peer else None
        _raise_if_stopped(hil, run)
        with timed("robustness: ping back (the DUT's own recovery)"):
            ping_ms = ping_back(hil, pc, target)
        if ping_ms is None:
            _raise_if_stopped(hil, run, wait_s=2.0)
            raise DutError(f"the DUT answered no ping within {PING_BACK_S:g} s after {run.sent['sent']} frames")
        with timed("robustness: pools back (the DUT's own recovery)"):
            settle_ms, still = settle(hil, idle)
        _raise_if_stopped(hil, run)
        seen = window.close() if window is not None else None
        after = hil.dut.counters() if window is None else None
        with timed("robustness: the next clients served"):
            served = serve(hil, SERVE_GIVE_UP_S, normal_s)
        _raise_if_stopped(hil, run)
    except (DutError, BenchError) as exc:  # a DUT that stopped answering: the class's frames and the command
        if isinstance(exc, BenchError) and hil.dut.adapter.alive():
            raise
        _attach_frames(hil, run)
        if str(exc).startswith(f"robustness/{key}: "):
            raise
        raise DutError(f"robustness/{key}: {exc}; the frames are attached; replay them: {run.replay(hil)}") from exc
    finally:
        running.close()
    sent = run.sent
    assert sent is not None
    dut_delta = (seen.deltas.get("dut", {}) if seen is not None else
                 {k: v - before[k] for k, v in (after or {}).items() if before and k in before})  # fmt: skip
    measured: dict[str, float] = {"frames_sent": float(sent["sent"]), "frames_refused": float(sent["refused_mtu"]),  # type: ignore[arg-type]
                                  "ping_recovery_ms": round(ping_ms, 1)}  # fmt: skip
    waits = [s.delay_ms for s in served] + ([outcome.delay_ms] if outcome.delay_ms is not None else [])
    if all(w is not None for w in waits):  # a client not served has no wait: the limit then fails the case
        measured["serve_delay_ms"] = max(w for w in waits if w is not None)
    if outcome.delay_ms is not None:
        measured["state_delay_ms"] = outcome.delay_ms
    if dut_delta:
        measured["dut_dropped"] = float(sum(v for k, v in dut_delta.items() if DROP_KEY.match(k)))
    if idle is not None:
        measured["settle_ms"] = round(settle_ms, 1)
        measured["pools_held"] = float(sum(v for k, v in still.items() if k != "heap"))
        measured["heap_held_bytes"] = float(still.get("heap", 0))
    forbidden = None
    if peer_seen is not None:
        forbidden, reached = peer_seen
        measured |= {"forbidden_forwarded": float(forbidden), "frames_at_peer": float(reached)}
    variants = Counter(f.variant for f in run.frames)
    extra: dict[str, object] = {
        "class": point.name, "state": point.state, "title": title, "build": hil.dut.adapter.current_config,
        "pps": point.pps, "sender": sent, "variants": dict(variants), "pcap": str(run.pcap),
        "dut_counters": {k: v for k, v in dut_delta.items() if v}, "pools_idle": idle, "pools_held": still,
        "hops": {h: {k: v for k, v in c.items() if v} for h, c in (seen.deltas.items() if seen else []) if h != "dut"},
        "served": [s.__dict__ for s in served], "state_findings": outcome.findings,
        "live": running.live.__dict__ if running.live else None,
    }  # fmt: skip
    _attach_evidence(hil, key, sent, dut_delta, seen.deltas if seen else {}, idle, still, settle_ms, ping_ms)
    _attach_service(key, state.title, outcome, served, bound_ms)
    _attach_frames(hil, run)
    theory = tcp_goodput_mbps(hil.link_mbit, 1460) if hil.link_mbit else None
    spec = TrafficSpec("tcp", "dut_rx", RECOVERY_TCP_S)
    # the class's frames and the real clients' tests after it are the case's traffic too
    clients_s = sum(s.normal_s + s.delay_ms / 1000 for s in served if s.delay_ms is not None)
    other_s = float(sent.get("elapsed_s") or 0.0) + clients_s  # type: ignore[arg-type]
    try:
        rec = measure(hil, SCENARIO, Point(key, spec, theory, extra=extra, measured=measured,
                                           other_traffic_s=other_s), repeat=1)  # fmt: skip
    except (DutError, BenchError):
        _raise_if_stopped(hil, run, wait_s=2.0)  # it died in the short TCP run: the class's fault, with its frames
        raise
    allure.dynamic.title(f"robustness/{key}: {_summary(rec)}; {criteria(rec.metrics(), limits)}")
    if point.last:
        _attach_table(hil)
    own = _own_checks(hil, still, forbidden, run, outcome, served, state.title)
    try:
        check(hil, SCENARIO, [rec])
    except AssertionError as exc:
        if own:
            raise AssertionError(f"{exc}; robustness/{key}: " + "; ".join(own)) from None
        # a miss is measured again as every family's is (--confirm-misses, the majority of three): the
        # short TCP run again, never the class, its record keeping the class's own figures (a ping
        # back or a client served too late misses again in every trial; only the throughput can change)
        point_again = Point(key, spec, theory, extra=extra, measured=measured)  # the class is not sent again
        confirm_miss(hil, SCENARIO, exc, lambda: measure(hil, SCENARIO, point_again, repeat=1))
        return
    if own:
        hil.recorder.set_verdict(rec, "failed")
        raise AssertionError(f"robustness/{key}: " + "; ".join(own))


def _limit(limits: object, name: str, default: float) -> float:
    value = getattr(limits, name, None)
    if value is None:
        value = (getattr(limits, "model_extra", None) or {}).get(name)
    return float(value) if value is not None else default


def _write_class(run: ClassRun, point: RobustnessPoint, title: str, target: str, pc: PcInterface) -> None:
    """The class's frames to its PCAP (unless a replay sends that very file) and by variant to the case."""
    if point.replay is None or Path(point.replay).resolve() != run.pcap.resolve():
        write_pcap(run.pcap, [f.data for f in run.frames])
    variants = Counter(f.variant for f in run.frames)
    attach_text(
        f"{run.key}: the frames by variant ({len(run.frames)})",
        f"{title}, to {target} from {pc.iface} ({pc.mac}) at {point.pps:g} frames/s\n"
        + "\n".join(f"{n:7d}  {v}" for v, n in variants.items()),
    )


def _attach_service(key: str, state: str, outcome: StateOutcome, served: list[Served], bound_ms: float) -> None:
    lines = [f"state: {state}", *outcome.lines]
    if outcome.findings:
        lines += ["", "untrue or unserved in the state:", *(f"  - {f}" for f in outcome.findings)]
    lines += ["", f"the next real clients after the class (a 1-s TCP test each; bound: {bound_ms:.0f} ms beyond it):"]
    for s in served:
        wait = (f"served {s.delay_ms:.0f} ms beyond its normal time ({s.normal_s:.2f} s)" if s.delay_ms is not None
                else "NOT SERVED")  # fmt: skip
        bench = f", {s.bench_tries} the bench's (its server did not start; not counted)" if s.bench_tries else ""
        error = f"; last error: {s.last_error}" if s.last_error else ""
        lines.append(f"  {s.who}: {wait} ({s.tries} tries{bench}{error})")
    attach_text(f"{key}: time to serve and the DUT's figures", "\n".join(lines))


def _raise_if_stopped(hil: HilContext, run: ClassRun, wait_s: float = 0.0) -> None:
    """The DUT fault of a DUT whose program has stopped (waiting up to `wait_s` for a program
    that may still be writing its sanitizer report): the sanitizer's first line, the frames
    attached, the last ones before it stopped, and the command that replays them."""
    adapter = hil.dut.adapter
    deadline = time.monotonic() + wait_s
    while adapter.alive():
        if time.monotonic() >= deadline:
            return
        time.sleep(0.1)
    report = sanitizer_report(adapter.process_log())
    if report:
        attach_text("the sanitizer's report", report)
    said = f"; {report.splitlines()[0]}{_culprit(report)}" if report else ""
    stopped = (run.sent or {}).get("stopped_at")
    last = ""
    if isinstance(stopped, int) and stopped > 0:
        tail = run.frames[max(0, stopped - max(LAST_FRAMES, int(run.point.pps * LAST_SECONDS))) : stopped]
        path = run.pcap.with_name(f"{run.key}-last.pcap")
        write_pcap(path, [f.data for f in tail])
        allure.attach(path.read_bytes(), name=f"{run.key}: the last {len(tail)} frames before the DUT stopped (pcap)",
                      attachment_type="application/vnd.tcpdump.pcap", extension="pcap")  # fmt: skip
        last = f"; it stopped after frame {stopped}, the last {len(tail)} before it in {path.name}"
    _attach_frames(hil, run)
    raise DutError(
        f"robustness/{run.key}: the DUT stopped (exit code {adapter.exit_code()}{said}) under the class's "
        f"{len(run.frames)} frames{last}; the frames are attached ({run.key}.pcap.gz) and saved in {run.pcap}; "
        f"replay them: {run.replay(hil)}"
    )


def _culprit(report: str) -> str:
    """Where the sanitizer's report points: its first stack frame outside the sanitizer's own
    interceptors (", in fw_planted_defect_inspect planted_defect.c:25"), or nothing."""
    for found in STACK_FRAME.finditer(report):
        function, where = found.groups()
        if not function.startswith(("__asan", "__interceptor", "__sanitizer", "__ubsan")):
            return f", in {function} {where.rsplit('/', 1)[-1]}"
    return ""


def ping_back(hil: HilContext, pc: PcInterface, target: str) -> float | None:
    """Milliseconds from the class's end until the target answers a ping (None: not within PING_BACK_S).
    The PC first forgets the target's link address: its ARP request repairs a poisoned entry."""
    _quiet([*pc.prefix, "ip", "neigh", "del", target, "dev", pc.iface])
    start = time.monotonic()
    while time.monotonic() - start < PING_BACK_S:
        if not hil.dut.adapter.alive():
            return None
        if _quiet(ping_argv(pc.prefix, target, count=1, wait_s=0.5)):
            return (time.monotonic() - start) * 1000.0
        time.sleep(0.1)
    return None


def settle(hil: HilContext, idle: dict[str, int] | None) -> tuple[float, dict[str, int]]:
    """(ms until the DUT's pools and heap were back at their idle level, what is still held
    then); (0, {}) for a DUT that does not report them. A reading without its pools while the DUT
    runs is read again; one still without them at the end says the pools are unknown."""
    if idle is None:
        return 0.0, {}
    start = time.monotonic()
    still: dict[str, int] = {"pools (no reading)": 1}
    while hil.dut.adapter.alive():
        now = pools_used(hil.dut.counters())
        if now is not None:
            still = held(idle, now)
        if not still or time.monotonic() - start > SETTLE_S:
            break
        time.sleep(SETTLE_POLL_S)
    return (time.monotonic() - start) * 1000.0, still


def _at_peer(path: Path, frames: list[Frame]) -> tuple[int, int]:
    """(frames a bridge must not forward that the peer saw, frames of the class the peer saw: its
    capture keeps each frame's first SNAP_LEN bytes, compared with the frames sent)."""
    sent = {f.data[:SNAP_LEN] for f in frames}
    forbidden = reached = 0
    with RawPcapReader(str(path)) as reader:  # type: ignore[no-untyped-call]
        for data, _ in reader:
            forbidden += is_reserved_group(data)
            reached += bytes(data[:SNAP_LEN]) in sent
    return forbidden, reached


def _own_checks(hil: HilContext, still: dict[str, int], forbidden: int | None, run: ClassRun,
                outcome: StateOutcome | None = None, served: list[Served] | None = None,
                state: str = "") -> list[str]:  # fmt: skip
    """The family's own criteria (not a threshold's): pools back at idle, no reserved frame
    forwarded, the state's figures true and its clients served, the next real clients served."""
    out = [*(outcome.findings if outcome else [])]
    for s in served or []:
        if s.delay_ms is None:
            out.append(f"{s.who} was not served within {SERVE_GIVE_UP_S:g} s after the class ({s.tries} tries; "
                       f"last: {s.last_error})" + (f" [state: {state}]" if state else ""))  # fmt: skip
    if still:
        out.append(
            f"the DUT still holds {', '.join(f'{k} +{v}' for k, v in still.items())} beyond its idle level "
            f"{SETTLE_S:g} s after the class"
        )
    if forbidden:
        out.append(
            f"the peer received {forbidden} frames to IEEE 802.1D reserved group addresses "
            "01:80:C2:00:00:01..0F, which a bridge must not forward"
        )
    if out:
        out.append(f"replay: {run.replay(hil)}")
    return out


def _summary(rec: CaseRecord) -> str:
    m = rec.measured
    parts = [f"{m.get('frames_sent', 0):.0f} frames"]
    if "dut_dropped" in m:
        parts.append(f"DUT dropped {m['dut_dropped']:.0f}")
    if "ping_recovery_ms" in m:
        parts.append(f"ping back after {m['ping_recovery_ms']:.0f} ms")
    if "pools_held" in m:
        parts.append(
            "pools back at idle"
            if not m["pools_held"] and not m.get("heap_held_bytes")
            else f"pools held {m['pools_held']:.0f}"
        )
    if "forbidden_forwarded" in m:
        parts.append(f"{m['forbidden_forwarded']:.0f} reserved frames forwarded")
    eff = f" ({rec.efficiency_pct:.0f} %)" if rec.efficiency_pct is not None else ""
    parts.append(f"TCP after {rec.median:.1f} Mbit/s{eff}")
    return ", ".join(parts)


def _attach_frames(hil: HilContext, run: ClassRun) -> None:
    """The class's frames as sent (gzipped PCAP), once per case, within the run's PCAP budget."""
    if run.attached:
        return
    run.attached = True
    key, pcap = run.key, run.pcap
    packed = gzip.compress(pcap.read_bytes(), compresslevel=1)
    if hil.wire is None or hil.wire.settings.may_attach(len(packed)):
        allure.attach(
            packed,
            name=f"{key}: the frames sent (pcap.gz; replay: ./suite replay)",
            attachment_type="application/gzip",
            extension="pcap.gz",
        )
    else:
        attach_text(f"{key}: the frames sent", f"not attached (the run's PCAP budget is spent); saved in {pcap}")


def _attach_evidence(
    hil: HilContext,
    key: str,
    sent: dict[str, object],
    dut: dict[str, int],
    hops: dict[str, dict[str, int]],
    idle: dict[str, int] | None,
    still: dict[str, int],
    settle_ms: float,
    ping_ms: float | None,
) -> None:
    lines = [f"sent {sent['sent']} of {sent['frames']} frames in {sent['elapsed_s']} s ({sent['pps']} frames/s)"]
    if sent.get("refused"):
        lines.append(f"refused by the PC's interface (larger than its MTU allows): {sent['refused']}")
    lines.append(
        f"ping answered {ping_ms:.0f} ms after the class"
        if ping_ms is not None
        else f"ping: no answer within {PING_BACK_S:g} s"
    )
    if idle is None:
        lines.append("pools and heap: not reported by the DUT's console")
    else:
        lines.append(
            f"pools and heap back at the idle level after {settle_ms:.0f} ms"
            if not still
            else f"still held after {settle_ms:.0f} ms: {still}"
        )
    if dut:
        lines.append("\nthe DUT's counters (what it received, sent and dropped):")
        by_proto: dict[str, list[str]] = {}
        for k, v in sorted(dut.items()):
            proto, _, what = k.partition("_")
            if v and (DROP_KEYS.match(k) or (proto in PROTOCOLS and what in ("recv", "xmit"))):
                by_proto.setdefault(proto, []).append(f"{what} {v}")
        lines += [f"  {p:7s} {', '.join(items)}" for p, items in by_proto.items()]
        ran_out = {k.removeprefix("pool_").removesuffix("_err"): v for k, v in sorted(dut.items())
                   if k.startswith("pool_") and k.endswith("_err") and v}  # fmt: skip
        if ran_out:
            lines.append("  pools that ran out (allocations refused): "
                         + ", ".join(f"{k} {v}" for k, v in ran_out.items()))  # fmt: skip
    else:
        lines.append("the DUT's counters: not reported by its console")
    for hop, counters in hops.items():
        if hop != "dut" and (nonzero := {k: v for k, v in counters.items() if v}):
            lines.append(f"hop {hop}: " + ", ".join(f"{k} {v}" for k, v in sorted(nonzero.items())))
    attach_text(f"{key}: what the DUT dropped and how it recovered", "\n".join(lines))


def _attach_table(hil: HilContext) -> None:
    rows = hil.recorder.latest(SCENARIO)
    head = (
        f"{'class':10s} {'frames':>7s} {'refused':>7s} {'DUT dropped':>11s} {'ping back ms':>12s} "
        f"{'pools held':>10s} {'settle ms':>9s} {'at peer':>7s} {'TCP Mbit/s':>10s} {'eff %':>6s}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        m = r.measured

        def f(name: str, fmt: str = ".0f", m: dict[str, float] = m) -> str:
            return format(m[name], fmt) if name in m else "-"

        eff = f"{r.efficiency_pct:6.1f}" if r.efficiency_pct is not None else f"{'-':>6s}"
        lines.append(
            f"{r.case:10s} {f('frames_sent'):>7s} {f('frames_refused'):>7s} {f('dut_dropped'):>11s} "
            f"{f('ping_recovery_ms'):>12s} {f('pools_held'):>10s} {f('settle_ms'):>9s} "
            f"{f('frames_at_peer'):>7s} {r.median:10.2f} {eff}"
        )
    attach_text("robustness: every class of this run", "\n".join(lines))
