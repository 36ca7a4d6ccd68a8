"""Time to serve: after a class, how long the next legitimate clients wait beyond their normal
time. Each is a real 1-s TCP test, started as soon as the class (and its state) ended:

- the PC's iperf 2 client to the far end's server (the DUT's own, or the peer's through a DUT in
  the path);
- the far end's client to the PC's server (the DUT's own client; behind a DUT in the path the
  peer's, through it).

A client that is refused, reset or not answered tries again at once until the give-up time; its
wait is from the first try that reached the DUT to the end of the test that succeeded, less its
normal time. One that never succeeds is not served: the case says so with the last error (no
number is made up). A try whose receiver's server did not start, on a host the bench reaches
without the DUT (the PC, or the peer over its management link: its `ss` and iperf over SSH), never
reached the DUT: it is tried again, its time left out and counted apart (`bench_tries`); a bench
that starts no server in the give-up time is a bench error, not the DUT's failure.

A test's time is the client's: from the moment its server listened to the end of its report. The
server's start (iperf over SSH on a peer, a console command on the DUT... each checked with `ss`)
is the bench's and varies by hundreds of milliseconds from one try to the next.

Normal time: the same two tests on the DUT before the run's first class (`normal()`, once per
bench and DUT in a run): the 1 s and what this bench adds to it (the client's start over SSH, the
console's round trips), so the bound is the DUT's delay, not the bench's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hil.errors import BenchError, DutError
from hil.traffic.endpoints import Endpoint, FlowSpec, common_generator, run_flow
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
    bench_tries: int = 0  # tries whose server never started on a host off the DUT's path (not counted)


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
    to_far = _Attempt(pc, far, flow, receiver_off_path=far.behind_dut)
    to_pc = _Attempt(far, pc, flow, receiver_off_path=True)
    return [
        _until_served(f"the PC's client to {name}'s server", to_far, give_up_s, normal_s[0]),
        _until_served(f"{name}'s own client to the PC's server", to_pc, give_up_s, normal_s[1]),
    ]


class BenchRetry(Exception):
    """A try that never reached the DUT: the receiver's server, on a host the bench reaches
    without the DUT (the PC, or the peer over its management link), did not start."""


@dataclass
class _Attempt:
    """One real client's test: the receiver's server started, then the client sent through the
    DUT. Its time is the client's, from the moment the server listened: a server that is slow to
    start over SSH is the bench's time, not the DUT's."""

    sender: Endpoint
    receiver: Endpoint
    flow: FlowSpec
    receiver_off_path: bool  # the receiver's server starts on a host reached without the DUT

    def __call__(self) -> tuple[float, float]:
        """(when the client started, when its test ended), monotonic seconds."""
        marks: list[float] = []
        try:
            run_flow(self.sender, self.receiver, self.flow, common_generator(self.sender, self.receiver),
                     while_running=lambda: marks.append(time.monotonic()))  # fmt: skip
        except BenchError as exc:
            if not marks and self.receiver_off_path:
                raise BenchRetry(str(exc)) from exc
            raise
        return marks[0] if marks else time.monotonic(), time.monotonic()


def _until_served(who: str, attempt: Callable[[], tuple[float, float]], give_up_s: float, normal_s: float) -> Served:
    """Tries until served. The wait runs from the first try that reached the DUT to the end of the
    test that succeeded; a try whose server never started on a host off the DUT's path is the
    bench's: its time is left out, and a bench that never starts one is a bench error."""
    start = time.monotonic()
    first: float | None = None  # the first try that reached the DUT: the wait starts there
    bench_s = 0.0  # time in the bench's own failed tries after the wait started
    tries, bench_tries, last = 0, 0, None
    while True:
        tries += 1
        began = time.monotonic()
        try:
            sent_at, ended = attempt()
            first = sent_at if first is None else first
            wait_s = ended - first - bench_s - normal_s
            return Served(who, round(max(0.0, wait_s) * 1000, 1), tries, last, normal_s, bench_tries)
        except BenchRetry as exc:
            bench_tries += 1
            last = f"(the bench's, not counted) {exc}"[:300]
            if first is not None:
                bench_s += time.monotonic() - began
        except (DutError, BenchError) as exc:
            first = began if first is None else first
            last = str(exc)[:300]
        if time.monotonic() - start + SERVE_S > give_up_s:
            if first is None:
                raise BenchError(f"{who}: the receiver's server never started in {tries} tries over "
                                 f"{give_up_s:g} s, on a host the bench reaches without the DUT: {last}")  # fmt: skip
            return Served(who, None, tries, last, normal_s, bench_tries)
        time.sleep(RETRY_PAUSE_S)
