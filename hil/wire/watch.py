"""A case's view of the wire: its captures (hil.wire.capture) started before its traffic and
stopped after it, and windows inside it (one measurement's repetitions) with the counters read
before and after (hil.wire.counters) and the slice of each capture between them, summarized with
scapy (hil.wire.pcap_summary). The run's settings say whether to capture, the cap per capture, and
how much PCAP the report may take; a bench that cannot capture says why once and runs on."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hil.step_clock import timed
from hil.wire.bench_points import CapturePoint
from hil.wire.capture import (
    DEFAULT_MAX_PACKETS,
    SNAP_LEN,
    Capture,
    CaptureResult,
    CaptureUnavailable,
    run_dir,
    settle,
)
from hil.wire.counters import Counters, Hops, delta
from hil.wire.follow import CaptureFollower
from hil.wire.pcap_summary import PcapMark, WireSummary, mark, summarize_pcap


@dataclass
class WireSettings:
    """The run's capture settings and what it has spent (one per run)."""

    capture: bool = True
    max_packets: int = DEFAULT_MAX_PACKETS
    budget_bytes: int = 400_000_000
    attached_bytes: int = 0
    unavailable: str | None = None  # why this bench cannot capture (said once)
    say: Callable[[str], None] = print

    def refuse(self, why: str) -> None:
        if self.unavailable is None:
            self.unavailable = why
            self.say(f"hil: wire capture off for this run: {why}")

    def may_attach(self, size: int) -> bool:
        if self.attached_bytes + size > self.budget_bytes:
            return False
        self.attached_bytes += size
        return True


@dataclass
class WireSeen:
    """What one window of a case saw: the counters' changes on every hop and each capture's slice."""

    deltas: Counters
    summaries: dict[str, WireSummary]  # capture side ("pc", "peer") -> its slice's summary
    truncated: bool  # a capture reached its cap inside the window: its slice is not the whole traffic
    missed: dict[str, int] = field(default_factory=dict)  # side -> packets tcpdump's buffer dropped so far
    # the DUT's own readings before and after (levels such as high-water marks are not deltas)
    dut_before: dict[str, int] = field(default_factory=dict)
    dut_after: dict[str, int] = field(default_factory=dict)
    injected_drops: int | None = None  # frames the link's loss injector dropped (None: no injector)
    # pause frames the PC's real NIC received in the window (pause_received); None: not reported
    pause: dict[str, object] | None = None

    @property
    def complete(self) -> bool:
        """Every packet on the captured wires is in the slices (no cap reached, none missed)."""
        return not self.truncated and not any(self.missed.values())

    def as_fields(self, near: str, far: str) -> dict[str, object]:
        out: dict[str, object] = {f"capture_{side}": s.as_fields(near, far) for side, s in self.summaries.items()}
        if self.truncated:
            out["capture_truncated"] = True
        if self.missed:
            out["capture_missed"] = self.missed
        out["counters"] = self.deltas
        return out


@dataclass
class _Running:
    point: CapturePoint
    capture: Capture
    counted: PcapMark | None = None  # the file's last mark: the next is counted on from it
    follower: CaptureFollower | None = None  # the file read while it is written (None: read after)

    def mark(self) -> PcapMark:
        self.counted = mark(self.capture.path, since=self.counted)
        return self.counted


@dataclass
class Window:
    watch: WireWatch
    before: Counters
    start_index: dict[str, PcapMark]
    followed: set[str] = field(default_factory=set)  # the sides whose window their follower summarizes

    def close(self) -> WireSeen:
        """The window's counters and capture slices (the captures go on for the rest of the case);
        a capture that missed packets (tcpdump's buffer overflowed) or reached its cap is said so."""
        after = self.watch.hops.read()
        summaries: dict[str, WireSummary] = {}
        truncated = False
        missed: dict[str, int] = {}
        runs = {side: run for side, run in self.watch.running.items() if side in self.start_index}
        with timed("capture: settle"):
            settle([run.capture for run in runs.values()], quiet_s=0.02)
        for side, run in runs.items():
            try:
                with timed("capture: the window's summary"):
                    # read alongside the traffic: only its last records now; else its records from its mark
                    done = run.follower.close_window() if run.follower and side in self.followed else None
                    if done is not None:
                        summaries[side], end = done
                    else:
                        last = run.mark()
                        summaries[side] = summarize_pcap(run.capture.path, stop_packet=last.records,
                                                         start=self.start_index[side])  # fmt: skip
                        end = last.records
            except (OSError, ValueError):
                continue
            truncated |= end >= self.watch.settings.max_packets
            with timed("capture: tcpdump's drops"):
                dropped = run.capture.dropped_so_far()
            if dropped:
                missed[side] = dropped
        first, last = (c.get("link_loss", {}).get("dropped") for c in (self.before, after))
        injected = last - first if first is not None and last is not None else None
        seen = WireSeen(delta(self.before, after), summaries, truncated, missed, self.before.get("dut", {}),
                        after.get("dut", {}), injected)  # fmt: skip
        seen.pause = pause_received(self.before, after, self.watch.hops)
        return seen


def pause_received(before: Counters, after: Counters, hops: Hops) -> dict[str, object] | None:
    """The pause frames the PC's real NIC received during a window (read before and after:
    evidence that the DUT did not slow the bench's sender, hil.bench_faults.GENERATOR_SHORT);
    None where the NIC does not report them."""
    for iface in hops.interfaces:
        key = f"{iface.hop}_pause"
        if iface.pause and "rx_pause_frames" in before.get(key, {}) and "rx_pause_frames" in after.get(key, {}):
            return {"interface": iface.name, "rx": after[key]["rx_pause_frames"] - before[key]["rx_pause_frames"]}
    return None


@dataclass
class CaseWire:
    """A finished capture of a case: the file, tcpdump's counts and the whole file's summary."""

    side: str
    iface: str
    result: CaptureResult
    summary: WireSummary | None
    summary_s: float
    followed: bool = False  # the summary was read while tcpdump wrote the file (hil.wire.follow)


@dataclass
class WireWatch:
    settings: WireSettings
    points: list[CapturePoint]
    hops: Hops
    near: str  # the PC's address
    far: str  # the far end's (the DUT's, or the peer's behind a DUT in the path)
    case_name: str
    running: dict[str, _Running] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # why a side of this case has no capture

    def start(self) -> None:
        """Starts the case's captures (when the run captures and the bench can)."""
        s = self.settings
        if not s.capture or s.unavailable is not None:
            return
        try:
            base = run_dir() / _file_safe(self.case_name)
        except OSError as exc:  # e.g. /tmp/hil-captures made by another user
            s.refuse(f"cannot make the run's capture folder: {exc}")
            return
        for point in self.points:
            path = base.with_name(f"{base.name}-{point.side}.pcap")
            cap = Capture(list(point.prefix), point.iface, path, s.max_packets)
            try:
                cap.start()
            except CaptureUnavailable as exc:
                if exc.for_the_run:  # no tcpdump, no permission: said once, the run goes on without
                    s.refuse(str(exc))
                    self.stop()
                    return
                self.skipped.append(f"{point.side} side not captured: {exc}")  # this case only
                continue
            except OSError as exc:
                self.skipped.append(f"{point.side} side not captured: {exc}")
                continue
            follower = CaptureFollower(path)
            follower.start()
            self.running[point.side] = _Running(point, cap, follower=follower)

    def window(self, sides: tuple[str, ...] = ("pc",)) -> Window:
        """A window opens: counters read, the position noted of each capture of `sides` (the PC's
        by default: what a record reads; a peer's capture is summarized for the case, and for a
        window that asks for it). A capture that cannot be read is left out of the window:
        evidence never stops a measurement."""
        before = self.hops.read(mark=True)
        start = {}
        followed = set()
        for side, r in self.running.items():
            if side not in sides:
                continue
            try:
                with timed("capture: the window's start"):
                    start[side] = r.mark()  # where the file is read from if its follower fails
                    if r.follower is not None and r.follower.open_window() is not None:
                        followed.add(side)
            except (OSError, ValueError):
                continue
        return Window(self, before, start, followed)

    def stop(self) -> list[CaseWire]:
        """Stops the captures and summarizes each whole file (the caller attaches and removes them)."""
        out = []
        running, self.running = self.running, {}
        for side, run in running.items():
            result = run.capture.stop()
            t0 = time.monotonic()
            try:
                with timed("capture: the case's summary"):  # read alongside the traffic: its last records now
                    summary = run.follower.finish() if run.follower is not None else None
                    followed = summary is not None
                    if summary is None:
                        summary = summarize_pcap(result.path)
                summary.truncated_at_cap = result.truncated
            except (OSError, ValueError):
                summary, followed = None, False
            out.append(CaseWire(side, run.point.iface, result, summary, time.monotonic() - t0, followed))
        return out

    def remove(self, finished: list[CaseWire]) -> None:
        for f in finished:
            for suffix in (".pcap", ".log", ".pid"):
                f.result.path.with_suffix(suffix).unlink(missing_ok=True)


def _file_safe(name: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return keep[-120:] or "case"


def capture_text(wire: CaseWire, near: str, far: str, near_name: str, far_name: str) -> str:
    """The attachment beside the PCAP: what tcpdump says it wrote, then its summary."""
    r = wire.result
    head = [
        f"capture on {wire.iface} ({wire.side} side): {r.packets} packets written, snap length {SNAP_LEN} B, "
        f"cap {r.max_packets} packets" + (" - REACHED: the traffic went on beyond this file" if r.truncated else ""),
    ]
    if r.kernel_dropped:
        head.append(f"tcpdump's buffer dropped {r.kernel_dropped} packets: the file misses them (the wire did not)")
    if wire.summary is None:
        return "\n".join([*head, "the file could not be read"])
    body = wire.summary.text(near, far, near_name=near_name, far_name=far_name)
    how = "read while the capture was written, its last records" if wire.followed else "made after the capture"
    return "\n".join([*head, body, f"(summary {how} in {wire.summary_s:.2f} s)"])
