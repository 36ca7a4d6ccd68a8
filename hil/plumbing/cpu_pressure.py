"""How contended the bench PC's CPUs were while a case ran: evidence kept with every record
(`pc_cpu` in results.jsonl), not a verdict.

The PC's side of every case runs on the bench PC among its other tasks: the traffic generators
(iperf 2 and 3, the stream peer, ping), and for a DUT on the bench PC the DUT itself. When they
wait for a CPU, a sender falls behind its pace or a receiver drains its socket late. The kernel's
pressure stall information (/proc/pressure/cpu, Linux >= 4.20) counts in `some total=` the
microseconds in which at least one runnable task waited for a CPU; a meter samples it a few
times a second (hil.plumbing.counter_sampler), so any record's time window gets the share of it in
which something waited: `window`. A kernel without PSI gives no figure.

Why it is not gated: the kernel weighs each CPU's stall time by how busy that CPU was, and on a
2-core machine of this kind the shaped 100 Mbit/s cases leave the CPUs mostly idle, so a busy
loop on one core (busy, but with nothing waiting behind it) hardly shows: 0.3-21 % per case with
it, 1-37 % without it over a whole `./suite test` (the highest in flood pings). No limit
separates a loaded PC from an idle one. A bench PC shared with other jobs (a CI runner) shows in
it all the same.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hil.plumbing.counter_sampler import CounterSampler, Reading

if TYPE_CHECKING:
    from hil.results.recorder import Recorder

PRESSURE_FILE = Path("/proc/pressure/cpu")
_SOME = re.compile(r"^some .*\btotal=(\d+)", re.MULTILINE)


@dataclass(frozen=True)
class CpuPressure:
    """The share of a time window in which some runnable task of the bench PC waited for a CPU."""

    some_pct: float

    def as_fields(self) -> dict[str, object]:
        return {"some_pct": round(self.some_pct, 1)}


def read_some_total_us(path: Path = PRESSURE_FILE) -> int | None:
    """The `some` line's total stall time in microseconds; None without PSI."""
    try:
        found = _SOME.search(path.read_text())
    except OSError:
        return None
    return int(found.group(1)) if found else None


class CpuPressureMeter:
    """Samples the bench PC's CPU pressure in the background; `window(start, stop)` is the share
    of that time in which some task waited for a CPU."""

    def __init__(self, path: Path = PRESSURE_FILE) -> None:
        self.path = path
        self._sampler = CounterSampler("pc-cpu-pressure", self._read)

    @property
    def available(self) -> bool:
        return read_some_total_us(self.path) is not None

    def _read(self) -> Reading:
        total = read_some_total_us(self.path)
        return ("pc", (total,)) if total is not None else None

    def start(self) -> None:
        self._sampler.start()

    def stop(self) -> None:
        self._sampler.stop()

    def window(self, start: float, stop: float) -> CpuPressure | None:
        grown = self._sampler.growth(start, stop)
        if grown is None:
            return None
        (stalled_us,) = grown.deltas
        return CpuPressure(100.0 * stalled_us * 1000 / grown.span_ns)


@contextlib.contextmanager
def pc_cpu_recorded(recorder: Recorder) -> Iterator[Recorder]:
    """Every record the recorder writes in the context carries the bench PC's CPU pressure during
    it, where the kernel says (nothing is recorded of it where it does not)."""
    meter = CpuPressureMeter()
    if not meter.available:
        yield recorder
        return
    meter.start()
    recorder.set_pc_cpu(meter.window)
    try:
        yield recorder
    finally:
        recorder.set_pc_cpu(None)
        meter.stop()
