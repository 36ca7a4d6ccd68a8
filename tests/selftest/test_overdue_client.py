"""A PC client overdue behind a silent far end is stopped after a few unanswered probes, never
before its test's duration and grace, and never while the far end answers (hil.traffic.overdue)."""

from __future__ import annotations

import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from hil.errors import BenchError, DutError
from hil.evidence import as_dut_fault
from hil.tools.watched_run import Stopped, run_watched
from hil.traffic.overdue import OVERDUE_GRACE_S, PROBE_EVERY_S, SILENT_PROBES, either, silent_when_overdue


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _probes(answers: list[bool]) -> tuple[list[str], object]:
    asked: list[str] = []

    def answer(prefix: list[str], ip: str) -> bool:
        asked.append(ip)
        return answers.pop(0) if answers else False

    return asked, answer


def test_a_silent_far_end_stops_the_client_after_its_probes_once_overdue() -> None:
    clock = Clock()
    asked, answer = _probes([])
    stop = silent_when_overdue(["ip", "netns", "exec", "pc"], "10.77.0.2", 2.0, answers=answer, clock=clock)  # type: ignore[arg-type]
    clock.now += 2.0 + OVERDUE_GRACE_S - 0.01
    assert stop() is None and asked == []  # not overdue yet: no probe at all
    reasons = []
    for _ in range(SILENT_PROBES):
        clock.now += PROBE_EVERY_S
        reasons.append(stop())
    assert reasons[:-1] == [None] * (SILENT_PROBES - 1)
    assert reasons[-1] is not None and "10.77.0.2 answered none of 3 pings" in reasons[-1]
    assert len(asked) == SILENT_PROBES


def test_one_answer_starts_the_count_again_and_probes_keep_their_spacing() -> None:
    clock = Clock()
    asked, answer = _probes([False, False, True, False, False])
    stop = silent_when_overdue([], "10.77.0.2", 2.0, answers=answer, clock=clock)  # type: ignore[arg-type]
    clock.now += 2.0 + OVERDUE_GRACE_S
    seen = []
    for _ in range(5):
        seen.append(stop())
        assert stop() is None  # asked again within PROBE_EVERY_S: no probe
        clock.now += PROBE_EVERY_S
    assert seen == [None] * 5 and len(asked) == 5  # the answer reset the count: two silent since
    assert stop() is not None  # the third silent probe in a row


def test_either_gives_the_first_reason() -> None:
    assert either(None, None) is None
    only = lambda: "a"  # noqa: E731
    assert either(None, only) is only
    assert either(lambda: None, lambda: "b")() == "b"  # type: ignore[misc]


def test_a_running_program_is_stopped_with_the_reason() -> None:
    clock = Clock()
    stop = silent_when_overdue([], "10.77.0.2", 0.0, answers=lambda p, ip: False, clock=clock)
    argv = [sys.executable, "-c", "import time; time.sleep(30)"]
    began = time.monotonic()
    with pytest.raises(Stopped, match="answered none of 3 pings"):
        clock.now += OVERDUE_GRACE_S  # each poll of run_watched: one probe second later
        run_watched(argv, 60, lambda: (setattr(clock, "now", clock.now + PROBE_EVERY_S), stop())[1], "the client")
    assert time.monotonic() - began < 5
    assert subprocess.run(["pgrep", "-f", "time.sleep\\(30\\)"], capture_output=True).returncode == 1


def _answering_ctx() -> SimpleNamespace:
    """A case whose endpoint DUT is alive and answers the PC's ping again (loopback, really pinged)."""
    return SimpleNamespace(second=None, far_end=SimpleNamespace(behind_dut=False, ip="127.0.0.1"),
                           dut=SimpleNamespace(adapter=SimpleNamespace(alive=lambda: True), driver=None),
                           pc_side=SimpleNamespace(netns_prefix=[]))  # fmt: skip


def test_a_far_end_that_went_silent_is_the_duts_even_when_it_answers_again() -> None:
    clock = Clock()
    stop = silent_when_overdue([], "10.77.0.2", 0.0, answers=lambda p, ip: False, clock=clock)
    with pytest.raises(Stopped) as silent:
        clock.now += OVERDUE_GRACE_S
        run_watched([sys.executable, "-c", "import time; time.sleep(30)"], 60,
                    lambda: (setattr(clock, "now", clock.now + PROBE_EVERY_S), stop())[1], "the client")  # fmt: skip
    fault = as_dut_fault(_answering_ctx(), silent.value)  # type: ignore[arg-type]
    assert isinstance(fault, DutError) and "went silent is the DUT's failure" in str(fault)
    # any other tool failure while the DUT answers stays the bench's (the rule tool-failed)
    assert as_dut_fault(_answering_ctx(), BenchError("iperf printed no result")) is None  # type: ignore[arg-type]
