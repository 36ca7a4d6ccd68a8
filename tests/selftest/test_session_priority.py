"""The bench's sessions at the bench's priority (hil.plumbing.cpu_plan.raise_session): with the
kernel's autogroups a thread's niceness counts only inside its session, so a nice -20 bench tool
got half a core against a normal loop started in another session (a CI runner's job)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hil.plumbing.cpu_plan import BENCH_NICE, bench_placed, machine_cpus, make_plan, raise_session, session_nice
from hil.plumbing.proc import start_logged

pytestmark = [pytest.mark.selftest, pytest.mark.host_cpu]

AUTOGROUPS = Path("/proc/sys/kernel/sched_autogroup_enabled")
SPIN = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])}); exec('while True: pass')"
needs_autogroups = pytest.mark.skipif(
    session_nice(os.getpid()) is None, reason="this kernel has no autogroups (CONFIG_SCHED_AUTOGROUP)"
)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _spinning(cpu: int, session_niceness: int | None) -> Iterator[int]:
    """A normal-niceness loop on `cpu` in a session of its own, that session at `session_niceness`."""
    proc = subprocess.Popen([sys.executable, "-c", SPIN, str(cpu)], start_new_session=True)
    try:
        if session_niceness is not None:
            assert raise_session(proc.pid, session_niceness) is None
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


@needs_autogroups
def test_a_session_raised_to_the_bench_priority_takes_its_core_from_another_session() -> None:
    """Two loops on one CPU, each in its own session: equal halves, whatever each thread's niceness,
    until one session is raised: then it takes nearly all (weights 88761 : 1024)."""
    if AUTOGROUPS.read_text().strip() != "1":
        pytest.skip("autogroups are off on this machine: niceness alone orders the threads")
    cpu = machine_cpus()[-1]
    with _spinning(cpu, None) as other, _spinning(cpu, BENCH_NICE) as bench:
        time.sleep(0.3)
        before = _cpu_seconds(bench), _cpu_seconds(other)
        time.sleep(1.5)
        bench_s, other_s = _cpu_seconds(bench) - before[0], _cpu_seconds(other) - before[1]
    share = bench_s / (bench_s + other_s)
    assert share > 0.9, f"the raised session got {100 * share:.0f} % of the shared CPU, not ~99 %"


@needs_autogroups
def test_the_suite_raises_its_session_for_the_run_and_restores_it_and_its_programs_start_raised(
    tmp_path: Path,
) -> None:
    plan = make_plan()
    if plan is None:
        pytest.skip("one CPU: no CPU plan")
    me = os.getpid()
    before = session_nice(me)
    with bench_placed(plan):
        assert session_nice(me) == BENCH_NICE
        proc = start_logged(["sleep", "5"], tmp_path / "sleep.log", "sleep")
        try:
            assert session_nice(proc.pid) == BENCH_NICE, "a program the bench starts in its own session"
        finally:
            proc.kill()
            proc.wait()
    assert session_nice(me) == before
