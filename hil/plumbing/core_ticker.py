"""A finer scheduler tick on the DUT's core (tester/coreticker.c), for as long as the CPU plan
holds.

The CPU plan puts the DUT's program alone on its core at nice -20, above any normal-priority
load; such a load still gets about 1 % of that core, and the kernel hands it over for a whole tick
(4 ms at 250 Hz). Measured on a 2-core bench PC with a shell loop on the DUT's core (2026-12-06):
a spinning nice -20 thread there was held off 4 ms about three times a second (29 times in 10 s,
2 when idle), and QEMU's board, whose LAN9118 receive FIFO holds seven 1400-byte frames (4.1 ms
at 20 Mbit/s), lost 1-12 datagrams of the stress profile's bursts in 3 of 4 runs of 20 s. With
the ticker waking on that core every 2 ms, the same thread was held off more than 2 ms 4 times in
10 s, never more than 2.3 ms, and the board lost none in 4 runs of 20 s. The other load keeps its
share, in shorter turns; the ticker costs about 1.2 % of the DUT's core. Every millisecond
(2.9 %) was tried first: its wakes preempt the DUT's own thread too (QEMU's vCPU waited 4.8 % of a
case instead of 0.8 %), and in the same half hour QEMU's board lost 15-37 % of its UDP both ways
at once with it, 7-11 % without it (a slow spell of this machine: at other times, and at 2 ms,
0-0.6 %).
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator

from hil.errors import BenchError
from hil.paths import PROJECT_ROOT

TICKER = PROJECT_ROOT / "tester" / "build" / "coreticker"
PERIOD_US = 2000  # about the longest another job holds the DUT's core (the FIFO lasts 4.1 ms)
SLICE_US = 100  # the ticker's own scheduling slice: its wake ends the other job's turn
READY_S = 5.0


@contextlib.contextmanager
def core_ticker(cpu: int) -> Iterator[str]:
    """The ticker on `cpu` for the context, stopped at its end (and with this process: it asks the
    kernel to end it when its parent ends); yields what it said it runs with."""
    if not TICKER.exists():
        raise BenchError(f"{TICKER} is missing: ./suite setup builds it (tester/build.sh)")
    proc = subprocess.Popen(
        [str(TICKER), str(cpu), str(PERIOD_US), str(SLICE_US)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a session of its own, which it raises to the bench's priority
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline().strip()  # its first line, or "" once it exited
        if not ready.startswith("ready"):
            proc.wait(READY_S)
            why = (proc.stderr.read() if proc.stderr else "").strip() or f"exit code {proc.returncode}"
            raise BenchError(f"the DUT core's ticker (tester/coreticker) did not start: {why}")
        yield ready.removeprefix("ready: ")
    finally:
        proc.terminate()
        try:
            proc.wait(READY_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
