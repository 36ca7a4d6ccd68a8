"""A program run to completion that is stopped early when the run has become moot: traffic
between two hosts through a DUT that died stalls until the generator's own timeout (38 s for a
4-s case), while the DUT's death is known within a poll."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

from hil.errors import BenchError

POLL_S = 0.25

# asked every POLL_S while the program runs: why it should stop now, or None to let it run
StopWhen = Callable[[], str | None]


class Stopped(BenchError):
    """The program was stopped because `stop_when` gave a reason."""

    def __init__(self, reason: str, what: str, ran_s: float) -> None:
        self.reason = reason
        self.action = f"{what} was stopped after {ran_s:.1f} s"  # what was done about it
        super().__init__(f"{reason}: {self.action}")


def run_watched(
    argv: list[str], timeout_s: float, stop_when: StopWhen | None = None, what: str = "the program"
) -> subprocess.CompletedProcess[str]:
    """subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s) that also stops
    the program (Stopped, naming it as `what`) as soon as `stop_when()` gives a reason. The
    program is killed when this returns early for any reason (a timeout, Ctrl-C, a stop)."""
    if stop_when is None:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    started = time.monotonic()
    deadline = started + timeout_s
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while True:
            try:  # retrying communicate() after its timeout loses no output
                out, err = proc.communicate(timeout=max(0.01, min(POLL_S, deadline - time.monotonic())))
                return subprocess.CompletedProcess(argv, proc.returncode, out, err)
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    raise subprocess.TimeoutExpired(argv, timeout_s) from None
                reason = stop_when()
                if reason:
                    raise Stopped(reason, what, time.monotonic() - started) from None
    finally:
        if proc.poll() is None:  # as subprocess.run does: kill, then wait for the process only (a
            proc.kill()  # child of it, e.g. an ssh session, may hold the pipes open a while longer)
            proc.wait()
