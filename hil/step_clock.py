"""Where a case's wall time goes: the suite's own steps (bring-up, console round trips, captures,
counters, probes, summaries, attachments) timed by name and summed per case, each step's time
exclusive of the steps timed inside it, so the steps of a case add up to its wall time (what no
step names is its phase's own: `setup`, `call`, `teardown`). The traffic itself is a step too
(`traffic`), so a case's fixed costs are its wall time less that.

One clock per pytest case (fixtures/step_times.py starts and writes it); `timed(name)` anywhere
in the suite adds to the running case's clock and costs nothing without one."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class CaseClock:
    test: str
    started: float = field(default_factory=lambda: time.monotonic())
    seconds: dict[str, float] = field(default_factory=dict)  # exclusive seconds per step
    calls: dict[str, int] = field(default_factory=dict)
    _stack: list[list[float]] = field(default_factory=list)  # [start, seconds of the steps inside]

    def enter(self) -> None:
        self._stack.append([time.monotonic(), 0.0])

    def leave(self, name: str) -> None:
        start, inner = self._stack.pop()
        took = time.monotonic() - start
        self.seconds[name] = self.seconds.get(name, 0.0) + max(took - inner, 0.0)
        self.calls[name] = self.calls.get(name, 0) + 1
        if self._stack:
            self._stack[-1][1] += took

    def as_fields(self) -> dict[str, object]:
        wall = time.monotonic() - self.started
        return {
            "test": self.test,
            "wall_s": round(wall, 4),
            "steps": {k: round(v, 4) for k, v in sorted(self.seconds.items(), key=lambda kv: -kv[1])},
            "calls": dict(sorted(self.calls.items())),
        }


_running: CaseClock | None = None


def start(test: str) -> CaseClock:
    global _running
    _running = CaseClock(test)
    return _running


def stop() -> CaseClock | None:
    global _running
    clock, _running = _running, None
    return clock


@contextmanager
def timed(name: str) -> Iterator[None]:
    """Adds the block's time (less the steps timed inside it) to the running case's step `name`."""
    clock = _running
    if clock is None:
        yield
        return
    clock.enter()
    try:
        yield
    finally:
        clock.leave(name)
