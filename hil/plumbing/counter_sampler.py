"""Kernel counters that only grow (a thread's run and wait nanoseconds, the host's CPU pressure
stall microseconds), sampled in the background a few times a second, so that any record's time
window gets how much they grew over it: `growth(start)`."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass

SAMPLE_PERIOD_S = 0.25
KEEP_SAMPLES = 4 * 3600  # one hour at 4 Hz: longer than any case

# what is counted now (a key: a new one, e.g. a restarted thread, starts over) and its counters;
# None when there is nothing to read
Reading = tuple[Hashable, tuple[int, ...]] | None


@dataclass(frozen=True)
class _Sample:
    t: float
    key: Hashable
    counters: tuple[int, ...]


@dataclass(frozen=True)
class Growth:
    span_ns: float  # from the sample at the window's start to the fresh one at its end
    deltas: tuple[int, ...]


class CounterSampler:
    """Samples `read()` every SAMPLE_PERIOD_S on a daemon thread named `name`."""

    def __init__(self, name: str, read: Callable[[], Reading]) -> None:
        self.name = name
        self.read = read
        self._samples: deque[_Sample] = deque(maxlen=KEEP_SAMPLES)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def sample(self) -> _Sample | None:
        reading = self.read()
        if reading is None:
            return None
        s = _Sample(time.time(), *reading)
        with self._lock:
            self._samples.append(s)
        return s

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_PERIOD_S):
            self.sample()

    def growth(self, start: float, stop: float) -> Growth | None:
        """How much the counters grew from `start` to now (`stop` is when the case ended, just
        before this call): from the last sample at or before `start` to a fresh one. None when
        the same key was not sampled over the whole window."""
        end = self.sample()
        if end is None or stop <= start:
            return None
        with self._lock:
            before = [s for s in self._samples if s.key == end.key and s.t <= start + SAMPLE_PERIOD_S]
        if not before:
            return None
        first = before[-1]
        span_ns = (end.t - first.t) * 1e9
        if span_ns <= 0:
            return None
        return Growth(span_ns, tuple(b - a for a, b in zip(first.counters, end.counters, strict=True)))
