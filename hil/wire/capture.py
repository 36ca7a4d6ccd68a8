"""A bounded packet capture on one interface of the bench, with tcpdump: headers only (a snap
length), at most `max_packets` (so at most `max_bytes()` on disk), started before a case's
traffic and stopped after it. The run's captures live in one directory per run
(`CAPTURE_ROOT/run-<pid>`) holding the tcpdump processes' pids; the next run removes a directory
whose run is gone, with any tcpdump it left (`cleanup_stale`), and a capture's tcpdump dies with
the suite's process (PR_SET_PDEATHSIG) even when that is SIGKILLed."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from hil.plumbing.netns import pid_alive
from hil.plumbing.proc import die_with_parent, interrupt
from hil.step_clock import timed

CAPTURE_ROOT = Path("/tmp/hil-captures")
# Ethernet, IPv4 without options and TCP with every option (14 + 20 + 60 = 94 bytes), or a UDP
# datagram's header and the 24 bytes of a stream packet's (66): the headers, never the data
# (IPv4 options, unused by the benches' traffic, would take up to 40 bytes more)
SNAP_LEN = 128
# the main job's quick TCP and UDP cases, three repetitions of 3 s, whole (about 110,000 and
# 70,000 packets): at most 17.3 MB a file, about 2.5 MB gzipped
DEFAULT_MAX_PACKETS = 120_000
PCAP_RECORD_OVERHEAD = 16
PCAP_FILE_HEADER = 24
START_TIMEOUT_S = 5.0


class CaptureUnavailable(Exception):
    """A capture could not start. `for_the_run`: the bench cannot capture at all (no tcpdump, no
    root or cap_net_raw): said once, the run goes on without; else only this capture failed."""

    def __init__(self, why: str, for_the_run: bool = False) -> None:
        super().__init__(why)
        self.for_the_run = for_the_run


def max_bytes(max_packets: int, snap_len: int = SNAP_LEN) -> int:
    """The largest file a capture of `max_packets` can write."""
    return PCAP_FILE_HEADER + max_packets * (snap_len + PCAP_RECORD_OVERHEAD)


def settle(captures: list[Capture], quiet_s: float = 0.03, limit_s: float = 0.5) -> None:
    """Waits until no capture's file grows any more (what the kernel still held is written), all
    at once, at most limit_s. Each capture remembers the size it settled at: a capture stopped
    with its file still at that size has had nothing on its wire since (`Capture.stop`)."""
    deadline, sizes = time.monotonic() + limit_s, None
    while time.monotonic() < deadline:
        now = [c.size() for c in captures]
        if now == sizes:
            for c, size in zip(captures, now, strict=True):
                c.settled_size = size
            return
        sizes = now
        time.sleep(quiet_s)


def run_dir() -> Path:
    """This run's capture directory (made on first use)."""
    path = CAPTURE_ROOT / f"run-{os.getpid()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def remove_run_dir() -> None:
    """Removes this run's capture directory (every capture in it is stopped by then)."""
    shutil.rmtree(CAPTURE_ROOT / f"run-{os.getpid()}", ignore_errors=True)


def cleanup_stale() -> list[Path]:
    """Removes the capture directories of runs that are gone, killing any tcpdump they left
    (its pid recorded beside its file, checked to be that capture's tcpdump). Returns them."""
    removed: list[Path] = []
    if not CAPTURE_ROOT.is_dir():
        return removed
    for path in CAPTURE_ROOT.glob("run-*"):
        try:
            owner = int(path.name.removeprefix("run-"))
        except ValueError:
            continue
        if owner == os.getpid() or pid_alive(owner):
            continue
        for pidfile in path.glob("*.pid"):
            _kill_recorded(pidfile)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _kill_recorded(pidfile: Path) -> None:
    with contextlib.suppress(OSError, ValueError):
        pid = int(pidfile.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if (
            b"tcpdump" in Path(cmdline[0].decode()).name.encode()
            and str(pidfile.with_suffix(".pcap")).encode() in cmdline
        ):
            os.kill(pid, signal.SIGKILL)


@dataclass
class CaptureResult:
    path: Path
    packets: int  # tcpdump's own count of packets written ("N packets captured")
    kernel_dropped: int  # the capture's buffer overflowed: packets on the wire it missed
    truncated: bool  # stopped at max_packets: the traffic went on beyond the file
    max_packets: int


class Capture:
    """tcpdump on `iface` in the namespace `netns_prefix` enters, writing `path` (one case's side)."""

    def __init__(self, netns_prefix: list[str], iface: str, path: Path, max_packets: int = DEFAULT_MAX_PACKETS) -> None:
        if max_packets < 1:
            raise ValueError("a capture needs a packet cap of at least 1")
        self.netns_prefix, self.iface, self.path, self.max_packets = netns_prefix, iface, path, max_packets
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = path.with_suffix(".log")
        self._pidfile = path.with_suffix(".pid")
        self.settled_size: int | None = None  # the file's size when it last settled (`settle`)

    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def argv(self) -> list[str]:
        # -Z root: Debian's tcpdump drops to its own user otherwise (and loses the parent-death
        # signal); -U: each packet written at once, so a slice can be read while it runs
        return [*self.netns_prefix, "tcpdump", "-i", self.iface, "-s", str(SNAP_LEN), "-c", str(self.max_packets),
                "-w", str(self.path), "-U", "-n", "-Z", "root", "--immediate-mode"]  # fmt: skip

    def start(self) -> None:
        """Starts tcpdump and returns once it listens; CaptureUnavailable when it cannot."""
        with timed("capture: start"):
            self._start()

    def _start(self) -> None:
        if shutil.which("tcpdump") is None:
            raise CaptureUnavailable("no tcpdump on the bench PC (Debian: apt-get install tcpdump)", for_the_run=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._log.open("wb") as log:
            self._proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                          preexec_fn=die_with_parent)  # fmt: skip
        self._pidfile.write_text(str(self._proc.pid))
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            said = self._log.read_text(errors="replace")
            if "listening on" in said:
                return
            if self._proc.poll() is not None:
                self._proc = None
                self._pidfile.unlink(missing_ok=True)
                denied = "ermission" in said or "not permitted" in said
                raise CaptureUnavailable(_why_not(said), for_the_run=denied)
            time.sleep(0.01)
        self.stop()
        raise CaptureUnavailable(f"tcpdump on {self.iface} did not start listening within {START_TIMEOUT_S:g} s")

    def dropped_so_far(self, wait_s: float = 0.05) -> int:
        """Packets tcpdump's buffer has dropped so far (it prints its counts on SIGUSR1); 0 when it
        has stopped (its final counts come with `stop`)."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return 0
        size = self._log.stat().st_size if self._log.exists() else 0
        proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 10 * wait_s
        while time.monotonic() < deadline:
            said = self._log.read_bytes()[size:].decode(errors="replace") if self._log.exists() else ""
            if "dropped by kernel" in said:
                return tcpdump_count(said, "packets dropped by kernel")
            time.sleep(wait_s / 5)
        return 0

    def stop(self) -> CaptureResult:
        """Stops tcpdump (SIGINT: it finishes its file) and says what it wrote."""
        with timed("capture: stop"):
            return self._stop()

    def _stop(self) -> CaptureResult:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            if self.settled_size is None or self.size() != self.settled_size:  # else settled, nothing since
                settle([self], quiet_s=0.02, limit_s=0.2)  # the case's traffic ended before its evidence
            interrupt(proc)
        self._pidfile.unlink(missing_ok=True)
        said = self._log.read_text(errors="replace") if self._log.exists() else ""
        captured = tcpdump_count(said, "packets captured")
        return CaptureResult(self.path, captured, tcpdump_count(said, "packets dropped by kernel"),
                             captured >= self.max_packets, self.max_packets)  # fmt: skip

    def remove(self) -> None:
        for p in (self.path, self._log, self._pidfile):
            p.unlink(missing_ok=True)


def tcpdump_count(said: str, what: str) -> int:
    """The last count tcpdump gave of `what` ("6 packets captured"; on SIGUSR1 one line of all)."""
    found = re.findall(rf"(\d+) {what}", said)
    return int(found[-1]) if found else 0


def _why_not(said: str) -> str:
    text = " ".join(said.split())[-300:]
    if "ermission" in said or "not permitted" in said:
        return f"tcpdump may not capture here: it needs root or cap_net_raw ({text})"
    return f"tcpdump could not start: {text or 'no output'}"
