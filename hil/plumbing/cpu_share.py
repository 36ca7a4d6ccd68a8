"""How much of a host core a DUT that runs on the bench PC got while a case ran.

A DUT on the bench PC (the host firmware's process, the Cortex-M7 image on QEMU's vCPU thread)
has the host's CPU as its own. Before the bench gave it a core of its own (hil.plumbing.cpu_plan),
a loaded host kept that thread waiting while frames arrived (measured on a 2-core machine, QEMU's
vCPU: 2-3 % of a case idle, 15-24 % with one core kept busy, and the emulated ~6-frame FIFO lost
frames). How long it waited is evidence a reviewer reads beside a miss; it excuses nothing: a
DUT that needs more CPU per frame waits more on a shared host too (hil.bench_faults.RETIRED).

The kernel keeps per thread how long it ran and how long it waited runnable
(/proc/PID/task/TID/schedstat: run ns, run-queue wait ns, time slices). A meter samples those of
one thread a few times a second (hil.plumbing.counter_sampler), so any record's time window gets the
share of it: `window`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hil.plumbing.counter_sampler import CounterSampler, Reading

ThreadId = tuple[int, int]  # (process id, thread id)


@dataclass(frozen=True)
class CpuShare:
    """A thread's share of one host core over a time window, in percent of the window."""

    thread: str  # what the thread is, e.g. "QEMU vCPU (CPU 0/TCG)"
    run_pct: float
    wait_pct: float  # runnable but waiting for a core

    def as_fields(self) -> dict[str, object]:
        return {"thread": self.thread, "run_pct": round(self.run_pct, 1), "wait_pct": round(self.wait_pct, 1)}

    def describe(self) -> str:
        return f"{self.thread} ran {self.run_pct:.1f} % and waited for its core {self.wait_pct:.1f} % of the case"


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


class CpuShareMeter:
    """Samples one thread's schedstat in the background; `window(start, stop)` is its share of a
    core between two wall-clock times. `find_thread` names the thread to watch now (it changes when
    the DUT is restarted or re-flashed; a window across a change has no share)."""

    def __init__(self, what: str, find_thread: Callable[[], ThreadId | None]) -> None:
        self.what = what
        self.find_thread = find_thread
        self._sampler = CounterSampler("dut-cpu-share", self._read)

    def _read(self) -> Reading:
        thread = self.find_thread()
        stat = read_schedstat(*thread) if thread is not None else None
        return (thread, stat) if stat is not None else None

    def start(self) -> None:
        self._sampler.start()

    def stop(self) -> None:
        self._sampler.stop()

    def window(self, start: float, stop: float) -> CpuShare | None:
        """The thread's share of a core from `start` to now (`stop` is when the case ended, just
        before this call); None when the thread was not sampled over the whole window."""
        grown = self._sampler.growth(start, stop)
        if grown is None:
            return None
        run_ns, wait_ns = grown.deltas
        return CpuShare(self.what, 100.0 * run_ns / grown.span_ns, 100.0 * wait_ns / grown.span_ns)
