"""A PC client overdue behind a far end that went silent: stopped within seconds, not at its timeout.

A generator's timeout is generous (a test's duration twice over and 30 s more: a slow board may
drain its buffers late), so a DUT whose program still runs but answers nothing (its pools
exhausted, its stack hung) kept the PC's client waiting 34 s for a 2-s test before the case
could name it. Once the client is overdue (its test's duration and OVERDUE_GRACE_S past), the PC
pings its far end every PROBE_EVERY_S; SILENT_PROBES probes in a row without one answer stop the
client (hil.tools.watched_run.Stopped). The case then names the DUT as it would have after the
timeout (hil.evidence.dut_unresponsive asks it again): a far end that answers one ping is never
stopped early, so a slow but living DUT keeps the whole timeout."""

from __future__ import annotations

import time
from collections.abc import Callable

from hil.tools.ping import answers_ping
from hil.tools.watched_run import StopWhen

OVERDUE_GRACE_S = 5.0  # past the test's duration: an iperf 2 UDP client's FIN retries take 2.5 s
PROBE_EVERY_S = 1.0  # between the starts of two probes (each is up to 3 pings over about 1.4 s)
SILENT_PROBES = 3  # probes in a row without an answer: the far end is silent


class Silence(str):
    """A stop's reason that is the far end's silence: evidence against the path through the DUT,
    so the case is the DUT's even if it answers again by the time it is asked (hil.evidence)."""


def silent_when_overdue(
    netns_prefix: list[str],
    ip: str,
    expected_s: float,
    answers: Callable[[list[str], str], bool] = answers_ping,
    clock: Callable[[], float] = time.monotonic,
) -> StopWhen:
    """Why a client of the host at `netns_prefix` talking to `ip` for `expected_s` seconds should
    stop now: `ip` answered none of SILENT_PROBES probes once the client was overdue (None: let it run)."""
    started = clock()
    next_probe = started + expected_s + OVERDUE_GRACE_S
    silent = 0

    def reason() -> str | None:
        nonlocal next_probe, silent
        now = clock()
        if now < next_probe:
            return None
        next_probe = now + PROBE_EVERY_S
        if answers(netns_prefix, ip):
            silent = 0
            return None
        silent += 1
        if silent < SILENT_PROBES:
            return None
        return Silence(
            f"{ip} answered none of {silent} pings {now - started - expected_s:.0f} s after its "
            f"{expected_s:g}-s test should have ended"
        )

    return reason


def either(*checks: StopWhen | None) -> StopWhen | None:
    """The first reason any of `checks` gives (None: no check at all)."""
    present = [c for c in checks if c is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0]

    def reason() -> str | None:
        return next((r for c in present if (r := c()) is not None), None)

    return reason
