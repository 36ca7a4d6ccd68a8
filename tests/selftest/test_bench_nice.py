"""The bench's niceness (hil.plumbing.cpu_plan.bench_nice): -20 unless $HIL_BENCH_NICE ranks a run
lower, as ./suite test's second lane does; a value that is not a niceness above a normal-priority
load stops the run with one line naming it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT
from hil.plumbing.cpu_plan import NICE_ENV, bench_nice

pytestmark = pytest.mark.selftest


def test_the_bench_runs_at_minus_20_unless_told_a_lower_rank() -> None:
    assert bench_nice({}) == -20
    assert bench_nice({NICE_ENV: " "}) == -20
    assert bench_nice({NICE_ENV: "-10"}) == -10
    assert bench_nice({NICE_ENV: "-1"}) == -1


@pytest.mark.parametrize("value", ["0", "5", "-21", "ten", "-10.5"])
def test_a_niceness_not_above_a_normal_load_is_one_line_naming_it(value: str) -> None:
    with pytest.raises(ValueError) as stop:
        bench_nice({NICE_ENV: value})
    assert str(stop.value) == (
        f"hil: {NICE_ENV}={value!r}: the bench's niceness is a whole number from -20 to -1 (above a "
        "normal-priority load)"
    )


def test_a_run_given_a_bad_niceness_stops_before_it_starts_with_that_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:hypothesispytest", "tests/hil", "--collect-only",
                           "-q"], cwd=PROJECT_ROOT, env={"PATH": "/usr/bin:/bin", NICE_ENV: "ten"},
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    out = proc.stdout + proc.stderr
    lines = [line for line in out.splitlines() if line.strip()]
    assert proc.returncode == ExitCode.USAGE_ERROR, (proc.returncode, out[-2000:])
    assert lines == [
        f"hil: {NICE_ENV}='ten': the bench's niceness is a whole number from -20 to -1 (above a normal-priority load)"
    ], out[-2000:]
