"""How much of a host core a DUT that runs on the bench PC got while a case ran.

A DUT emulated on the bench PC (the Cortex-M7 image on QEMU) has the host's CPU as its own: its
firmware runs on QEMU's vCPU thread, which spins while a test runs, and the emulated LAN9118
drops frames once its ~6-frame RX FIFO is full. When the host is loaded, that thread waits on the
run queue while frames keep arriving, and the emulated board loses them: the host, not the
firmware, set the loss. Measured on a 2-core machine (PC->board UDP, 500 B at 45 Mbit/s): the
vCPU thread waited 2-3 % of the case on an idle host (0.003-0.03 % lost) and 15-24 % with one
core kept busy (0.26-0.78 % lost at 500 B, up to 5 % at 1448 B).

The kernel keeps per thread how long it ran and how long it waited runnable
(/proc/PID/task/TID/schedstat: run ns, run-queue wait ns, time slices). A meter samples those of
one thread a few times a second, so any record's time window gets the share of it: `window`.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SAMPLE_PERIOD_S = 0.25
KEEP_SAMPLES = 4 * 3600  # one hour at 4 Hz: longer than any case

ThreadId = tuple[int, int]  # (process id, thread id)


@dataclass(frozen=True)
class CpuShare:
    """A thread's share of one host core over a time window, in percent of the window."""

    thread: str  # what the thread is, e.g. "QEMU vCPU (CPU 0/TCG)"
    run_pct: float
    wait_pct: float  # runnable but waiting for a core
    starved_above_pct: float  # more waiting than this: the host, not the DUT, set the numbers

    @property
    def starved(self) -> bool:
        return self.wait_pct > self.starved_above_pct

    def as_fields(self) -> dict[str, object]:
        return {
            "thread": self.thread, "run_pct": round(self.run_pct, 1), "wait_pct": round(self.wait_pct, 1),
            "starved_above_pct": self.starved_above_pct, "starved": self.starved,
        }  # fmt: skip

    def describe(self) -> str:
        return f"{self.thread} ran {self.run_pct:.1f} % and waited for a host core {self.wait_pct:.1f} % of the case"


def read_schedstat(pid: int, tid: int) -> tuple[int, int] | None:
    """(run ns, run-queue wait ns) of a thread; None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def thread_named(pid: int, name: str) -> int | None:
    """The id of the process's thread called `name` (its comm), None if it has none (yet)."""
    try:
        tids = [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return None
    for tid in sorted(tids):
        try:
            if Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip() == name:
                return tid
        except OSError:
            continue
    return None


@dataclass(frozen=True)
class _Sample:
    t: float
    thread: ThreadId
    run_ns: int
    wait_ns: int


class CpuShareMeter:
    """Samples one thread's schedstat in the background; `window(start, stop)` is its share of a
    core between two wall-clock times. `find_thread` names the thread to watch now (it changes when
    the DUT is restarted or re-flashed; a window across a change has no share)."""

    def __init__(self, what: str, find_thread: Callable[[], ThreadId | None], starved_above_pct: float) -> None:
        self.what = what
        self.find_thread = find_thread
        self.starved_above_pct = starved_above_pct
        self._samples: deque[_Sample] = deque(maxlen=KEEP_SAMPLES)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="dut-cpu-share", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def _sample(self) -> _Sample | None:
        thread = self.find_thread()
        if thread is None:
            return None
        stat = read_schedstat(*thread)
        if stat is None:
            return None
        s = _Sample(time.time(), thread, *stat)
        with self._lock:
            self._samples.append(s)
        return s

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_PERIOD_S):
            self._sample()

    def window(self, start: float, stop: float) -> CpuShare | None:
        """The thread's share of a core from `start` to now (`stop` is when the case ended, just
        before this call): from the last sample at or before `start` to a fresh one. None when
        the thread was not sampled over the whole window."""
        end = self._sample()
        if end is None or stop <= start:
            return None
        with self._lock:
            before = [s for s in self._samples if s.thread == end.thread and s.t <= start + SAMPLE_PERIOD_S]
        if not before:
            return None
        first = before[-1]
        span_ns = (end.t - first.t) * 1e9
        if span_ns <= 0:
            return None
        run = 100.0 * (end.run_ns - first.run_ns) / span_ns
        wait = 100.0 * (end.wait_ns - first.wait_ns) / span_ns
        return CpuShare(self.what, run, wait, self.starved_above_pct)
