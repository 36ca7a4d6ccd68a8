"""Time to serve: after a class, how long the next legitimate clients wait beyond their normal
time. Each is a real 1-s TCP test, started as soon as the class (and its state) ended:

- the PC's iperf 2 client to the far end's server (the DUT's own, or the peer's through a DUT in
  the path);
- the far end's client to the PC's server (the DUT's own client; behind a DUT in the path the
  peer's, through it).

A client that is refused, reset or not answered tries again at once until the give-up time; its
wait is from the first try to the end of the test that succeeded, less its normal time. One that
never succeeds is not served: the case says so with the last error (no number is made up).

Normal time: the same two tests on the DUT before the run's first class (`normal()`, once per
bench and DUT in a run): the 1 s and what this bench adds to it (starting iperf over SSH on a peer,
the console's round trips), so the bound is the DUT's delay, not the bench's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hil.errors import BenchError, DutError
from hil.traffic.endpoints import FlowSpec, common_generator, run_flow
from hil.traffic.roles import pc_endpoint

if TYPE_CHECKING:
    from hil.session import HilContext

SERVE_S = 1.0
RETRY_PAUSE_S = 0.05
PORT = 5001


@dataclass(frozen=True)
class Served:
    who: str  # "the PC's client to the DUT", ...
    delay_ms: float | None  # beyond SERVE_S; None: not served before giving up
    tries: int
    last_error: str | None
    normal_s: float = SERVE_S  # its normal time on this bench


_NORMAL: dict[tuple[str, str], tuple[float, float]] = {}  # (bench file, DUT) -> each client's normal time (s)


def normal(hil: HilContext, give_up_s: float) -> tuple[float, float]:
    """The two clients' normal times on this bench and DUT (measured once, before any class)."""
    key = (str(hil.bench_file), hil.dut.config.name)
    if key not in _NORMAL:
        first = serve(hil, give_up_s, (SERVE_S, SERVE_S))
        if any(s.delay_ms is None for s in first):
            why = "; ".join(f"{s.who}: {s.last_error}" for s in first if s.delay_ms is None)
            raise DutError(f"before any hostile frame, a real client was not served in {give_up_s:g} s: {why}")
        _NORMAL[key] = tuple(SERVE_S + (s.delay_ms or 0) / 1000 for s in first)  # type: ignore[assignment]
    return _NORMAL[key]


def serve(hil: HilContext, give_up_s: float, normal_s: tuple[float, float]) -> list[Served]:
    """The real clients' waits beyond their normal times after a class, in both directions."""
    pc = pc_endpoint(hil.pc_side)
    far = hil.far_end
    name = "the peer" if far.behind_dut else "the DUT"
    flow = FlowSpec("tcp", SERVE_S, port=PORT)
    to_far = lambda: run_flow(pc, far, flow, common_generator(pc, far))  # noqa: E731
    to_pc = lambda: run_flow(far, pc, flow, common_generator(far, pc))  # noqa: E731
    return [
        _until_served(f"the PC's client to {name}'s server", to_far, give_up_s, normal_s[0]),
        _until_served(f"{name}'s own client to the PC's server", to_pc, give_up_s, normal_s[1]),
    ]


def _until_served(who: str, attempt: object, give_up_s: float, normal_s: float) -> Served:
    start = time.monotonic()
    tries, last = 0, None
    while True:
        tries += 1
        try:
            attempt()  # type: ignore[operator]
            return Served(who, round(max(0.0, time.monotonic() - start - normal_s) * 1000, 1), tries, last, normal_s)
        except (DutError, BenchError) as exc:
            last = str(exc)[:300]
        if time.monotonic() - start + SERVE_S > give_up_s:
            return Served(who, None, tries, last, normal_s)
        time.sleep(RETRY_PAUSE_S)
