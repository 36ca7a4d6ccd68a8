"""The bench's frame tester (tester/frametester.c), driven from Python: one trial sends numbered,
time-stamped IPv4/UDP frames of an RFC 2544 frame size from one end, evenly spaced at the offered
frame rate (never closer than the medium's line-rate gap), and counts them at the other end.

Each end is a host of the bench reached through its argv prefix (a namespace of the bench PC);
the sender bypasses its interface's qdisc, so the spacing is the tester's, not the bench shaper's.
On a host of two cores or more the sender busy-waits on the last core and the receiver runs on
the first (a model device of the bench files, tester/modelbox, beside it: `--cpu 0`).
A trial gives what RFC 2544 asks of every test: frames offered and received, the loss, the
one-way latency (both ends on one host clock), the gaps between the offered frames at the
device's input (captured on the device's port where the bench owns it, the virtual bench's
namespaces; else as they left the tester), and which frames were lost (runs of sequence numbers)
and the longest silence at the receiver (RFC 6201's reset time).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import subprocess
from dataclasses import dataclass, field

from hil.errors import BenchError
from hil.paths import PROJECT_ROOT
from hil.traffic.roles import GENERATOR_TOLERANCE

TESTER = PROJECT_ROOT / "tester" / "build" / "frametester"
ETHERNET_OVERHEAD = 20  # preamble and start delimiter (8) + inter-frame gap (12); the FCS is in the frame size
RFC2544_FRAME_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
READY_TIMEOUT_S = 10.0
DEFAULT_LINGER_MS = 150  # three times the bench shaper's default 50-ms queue
_streams = itertools.count(1)
_MACS: dict[tuple[tuple[str, ...], str], str] = {}  # (host's prefix, interface) -> link address


def line_rate_fps(link_mbit: float, frame_bytes: int) -> float:
    """The medium's theoretical frame rate (RFC 2544: 148,810 frames/s at 64 B on 100 Mbit/s)."""
    return link_mbit * 1e6 / ((frame_bytes + ETHERNET_OVERHEAD) * 8)


def frame_mbps(fps: float, frame_bytes: int) -> float:
    """A frame rate as bits per second of the frames (MAC header to FCS), Mbit/s."""
    return fps * frame_bytes * 8 / 1e6


@dataclass(frozen=True)
class InputTap:
    """Where the capture at the device's input runs: the device's port on its side of the link."""

    name: str  # e.g. "DUT port p0"
    prefix: tuple[str, ...]
    iface: str


@dataclass(frozen=True)
class TesterEnd:
    """One end of the tester: how to run a program on its host, its interface and address."""

    name: str  # "PC", "peer"
    prefix: tuple[str, ...]
    iface: str
    ip: str
    # the device's port this end's frames enter it through, where the bench can capture there
    device_input: InputTap | None = None
    # as the receiving end: how long it waits for frames still in flight after the sender's last
    # (the deepest queue on the way, three times over)
    linger_ms: int = DEFAULT_LINGER_MS

    def mac(self) -> str:
        key = (self.prefix, self.iface)
        if key not in _MACS:
            out = _run([*self.prefix, "ip", "-j", "link", "show", "dev", self.iface], 10)
            try:
                _MACS[key] = str(json.loads(out)[0]["address"])
            except (ValueError, LookupError) as exc:
                raise BenchError(f"the {self.name}'s interface {self.iface}: no link address in `ip -j link`") from exc
        return _MACS[key]


@dataclass(frozen=True)
class Phase:
    fps: float
    count: int

    def arg(self) -> str:
        return f"{max(1, round(self.fps))}:{max(1, self.count)}"


@dataclass
class FrameTrial:
    """One trial's figures from both ends (the sender's and the receiver's JSON)."""

    frame_bytes: int
    phases: tuple[Phase, ...]
    sender: dict[str, object]
    receiver: dict[str, object]
    label: str = ""
    notes: list[str] = field(default_factory=list)
    tap: dict[str, object] | None = None  # the capture at the device's input (frametester tap), if any
    tap_name: str = ""

    @property
    def offered_fps(self) -> float:
        return self.phases[0].fps

    @property
    def sent(self) -> int:
        return int(self.sender["sent"])  # type: ignore[call-overload]

    @property
    def received(self) -> int:
        return int(self.receiver["received"])  # type: ignore[call-overload]

    @property
    def lost(self) -> int:
        return self.sent - self.received

    @property
    def loss_ratio(self) -> float:
        return self.lost / self.sent if self.sent else 0.0

    @property
    def elapsed_s(self) -> float:
        return float(self.sender["elapsed_s"])  # type: ignore[arg-type]

    @property
    def achieved_fps(self) -> float:
        """The rate the frames left at (first to last); a one-phase trial's."""
        return float(self.sender["achieved_fps"])  # type: ignore[arg-type]

    @property
    def generator_limited(self) -> bool:
        """The sender fell short of the offered rate (the tester's limit, not the device's)."""
        return len(self.phases) == 1 and self.sent > 1 and self.achieved_fps < GENERATOR_TOLERANCE * self.offered_fps

    @property
    def resyncs(self) -> int:
        """Times the sender was more than a gap late and moved its schedule on (a host stall)."""
        return int(self.sender.get("resyncs", 0))  # type: ignore[call-overload]

    @property
    def stalled_pct(self) -> float:
        """The share of the trial the host stalled the sender for (the schedule moved on)."""
        ns = float(self.sender.get("stalled_ns", 0))  # type: ignore[arg-type]
        return 100 * ns / 1e9 / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def gaps(self) -> dict[str, float]:
        """The offered frames' gaps at the device's input: captured at its port where the trial
        had the capture, else as they left the tester."""
        source = self.tap if self.tap is not None else self.sender
        return source["gaps"]  # type: ignore[return-value]

    @property
    def spacing_source(self) -> str:
        return f"capture at the {self.tap_name}" if self.tap is not None else "the tester's send times"

    @property
    def missing_at_input(self) -> int | None:
        """Frames sent that never reached the device's port (lost before the device), when captured
        completely (None also when the capture's own socket fell behind and dropped some)."""
        if self.tap is None or int(self.tap.get("capture_dropped", 0)):  # type: ignore[call-overload]
            return None
        return int(self.tap["missing"])  # type: ignore[call-overload]

    @property
    def clumped_pct(self) -> float:
        n = float(self.gaps["n"])
        return 100 * float(self.gaps["clumped"]) / n if n else 0.0

    @property
    def latency_us(self) -> dict[str, float]:
        """One-way latency percentiles of the received frames, microseconds."""
        lat: dict[str, float] = self.receiver["latency_ns"]  # type: ignore[assignment]
        return {k: round(float(v) / 1000, 1) for k, v in lat.items()}

    @property
    def lost_runs(self) -> list[tuple[int, int]]:
        return [(int(a), int(b)) for a, b in self.receiver["lost_runs"]]  # type: ignore[attr-defined]

    def spacing_fields(self) -> dict[str, object]:
        """The offered frames' gaps at the device's input, us (`source`: where they were measured)."""
        g = self.gaps
        out: dict[str, object] = {
            "even_gap_us": round(float(g["even_ns"]) / 1000, 3),
            "p5_gap_us": round(float(g["p5_ns"]) / 1000, 2),
            "median_gap_us": round(float(g["median_ns"]) / 1000, 2),
            "p95_gap_us": round(float(g["p95_ns"]) / 1000, 2),
            "max_gap_us": round(float(g["max_ns"]) / 1000, 1),
            "clumped_pct": round(self.clumped_pct, 3),
            "source": self.spacing_source,
        }
        if self.tap is not None:
            out["missing_at_input"] = self.missing_at_input
            out["capture_dropped"] = int(self.tap.get("capture_dropped", 0))  # type: ignore[call-overload]
        return out


def _run(argv: list[str], timeout_s: float) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise BenchError(f"`{' '.join(argv[-8:])}` did not finish within {timeout_s:g} s") from None
    if out.returncode != 0:
        lines = (out.stderr or out.stdout).strip().splitlines()
        raise BenchError(f"`{' '.join(argv[-8:])}` failed: {lines[-1] if lines else out.returncode}")
    return out.stdout


def require_tester() -> None:
    if not TESTER.exists():
        raise BenchError(
            f"the frame tester is not built ({TESTER.relative_to(PROJECT_ROOT)}): run `sudo ./suite setup`"
        )


class _Listener:
    """A receiving role of the tester (recv, tap) started before the sender: ready once its
    socket listens; "stop" on its stdin, then its linger, then its one JSON line."""

    def __init__(self, argv: list[str], what: str) -> None:
        self.what = what
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], READY_TIMEOUT_S)
        line = self.proc.stdout.readline().strip() if ready else ""
        if line != "ready":
            err = self.proc.stderr.read() if self.proc.poll() is not None and self.proc.stderr else ""
            self.kill()
            raise BenchError(f"the frame tester's {what} did not start: {err.strip() or line!r}")

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("stop\n")
        self.proc.stdin.flush()

    def result(self, timeout_s: float) -> dict[str, object]:
        try:
            out, err = self.proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise BenchError(f"the frame tester's {self.what} did not stop") from None
        if self.proc.returncode != 0:
            raise BenchError(f"the frame tester's {self.what} failed: {err.strip()}")
        try:
            return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]
        except (ValueError, IndexError) as exc:
            raise BenchError(f"the frame tester's {self.what} gave no result it could read ({exc})") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(5)


def run_frames(
    src: TesterEnd,
    dst: TesterEnd,
    frame_bytes: int,
    phases: list[Phase],
    *,
    line_mbps: float = 100.0,
    repeat: int = 1,
    pause_ms: int = 0,
    slow_ns: int = 0,
    linger_ms: int | None = None,
    label: str = "",
    tap: InputTap | None = None,
) -> FrameTrial:
    """One trial: `phases` (frame rate, count) from `src` to `dst`, `repeat` times `pause_ms`
    apart (back-to-back bursts); `slow_ns` more per frame slows the generator on purpose; `tap`:
    the frames' spacing captured at the device's input as well (else from the send times)."""
    require_tester()
    tap = tap or src.device_input
    linger_ms = dst.linger_ms if linger_ms is None else linger_ms
    stream = next(_streams) % 65536
    spec = ",".join(p.arg() for p in phases)
    expect = sum(p.count for p in phases) * repeat
    recv_argv = [*dst.prefix, str(TESTER), "recv", dst.iface, str(stream), str(expect), "--linger-ms", str(linger_ms)]
    tap_argv = (
        [*tap.prefix, str(TESTER), "tap", tap.iface, str(stream), spec, "--linger-ms", str(linger_ms)] if tap else []
    )
    send_argv = [*src.prefix, str(TESTER), "send", src.iface, dst.mac(), src.ip, dst.ip, str(frame_bytes), spec,
                 "--stream", str(stream), "--line-mbps", f"{line_mbps:.0f}"]  # fmt: skip
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:  # the sender's busy wait on a core of its own, the receiving roles on another
        send_argv += ["--cpu", str(cpus[-1])]
        recv_argv += ["--cpu", str(cpus[0])]
        tap_argv += ["--cpu", str(cpus[0])] if tap else []
    if repeat > 1:
        send_argv += ["--burst-repeat", str(repeat), "--pause-ms", str(pause_ms)]
        tap_argv += ["--burst-repeat", str(repeat)] if tap else []
    if slow_ns:
        send_argv += ["--slow-ns", str(slow_ns)]
    seconds = sum(p.count / p.fps for p in phases) * repeat + repeat * pause_ms / 1000
    listeners: list[_Listener] = []
    try:
        listeners.append(_Listener(recv_argv, f"receiver on the {dst.name}"))
        if tap is not None:
            listeners.append(_Listener(tap_argv, f"capture at the {tap.name}"))
        try:
            sender = json.loads(_run(send_argv, seconds * 3 + 20))
        except ValueError as exc:
            raise BenchError(f"the frame tester's sender gave no result it could read ({exc})") from None
        for lst in listeners:
            lst.stop()
        got = [lst.result(linger_ms / 1000 + 20) for lst in listeners]
    finally:
        for lst in listeners:
            lst.kill()
    return FrameTrial(frame_bytes, tuple(phases), sender, got[0], label, tap=got[1] if tap is not None else None,
                      tap_name=tap.name if tap is not None else "")  # fmt: skip
