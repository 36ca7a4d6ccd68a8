"""A generator run that is stopped as soon as the run is moot (hil.tools.watched_run)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hil.tools.watched_run import Stopped, run_watched

pytestmark = pytest.mark.selftest

SLEEPER = (
    "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); print('started', flush=True); time.sleep(30)"
)


def test_a_program_that_ends_gives_its_output_as_subprocess_run_does() -> None:
    code = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    done = run_watched([sys.executable, "-c", code], timeout_s=10, stop_when=lambda: None)
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")


def test_a_reason_stops_and_kills_the_program_within_a_poll(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    asked = time.monotonic() + 0.5
    started = time.monotonic()
    with pytest.raises(Stopped) as exc:
        run_watched([sys.executable, "-c", SLEEPER, str(pid_file)], timeout_s=30,
                    stop_when=lambda: "the DUT stopped" if time.monotonic() > asked else None,
                    what="the sleeper")  # fmt: skip
    assert time.monotonic() - started < 2
    assert exc.value.reason == "the DUT stopped"
    assert exc.value.action.startswith("the sleeper was stopped after ")
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped


def test_the_timeout_still_holds_and_kills_the_program(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    with pytest.raises(subprocess.TimeoutExpired):
        run_watched([sys.executable, "-c", SLEEPER, str(pid_file)], timeout_s=1, stop_when=lambda: None)
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
