"""The share of a host core a DUT on the bench PC gets (hil.plumbing.cpu_share), and what the checker
makes of a case missed while that DUT waited for a core: the DUT's failure, the wait said beside it
(hil.bench_faults.RETIRED: waiting proves nothing of the bench)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from hil.checks import BELOW_THRESHOLD, BenchFault
from hil.config.thresholds import ThresholdProfile
from hil.plumbing.cpu_share import CpuShareMeter, thread_named
from hil.results.recorder import CaseRecord, Recorder, make_record
from hil.scenarios.sweep import check
from hil.stats import summarize

pytestmark = [pytest.mark.selftest, pytest.mark.host_cpu]

SPIN = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])}); exec('while True: pass')"


def _spinners(cpu: int, n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", SPIN, str(cpu)]) for _ in range(n)]


def _share_of(pid: int, seconds: float) -> tuple[float, float]:
    meter = CpuShareMeter("spinner", lambda: (pid, pid))
    meter.start()
    try:
        time.sleep(0.5)  # a sample before the window
        start = time.time()
        time.sleep(seconds)
        share = meter.window(start, time.time())
    finally:
        meter.stop()
    assert share is not None
    return share.run_pct, share.wait_pct


def test_two_spinners_on_one_core_each_wait_about_half_the_time() -> None:
    """By construction: two busy loops pinned to one core share it, so each one waits for it
    about as long as it runs; other load on that core only makes them wait longer."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    procs = _spinners(cpu, 2)
    try:
        run, wait = _share_of(procs[0].pid, 2.0)
    finally:
        for p in procs:
            p.kill()
            p.wait()
    print(f"spinner sharing a core: ran {run:.1f} %, waited {wait:.1f} %")
    assert run + wait == pytest.approx(100.0, abs=8.0)
    assert 25.0 <= wait <= 75.0


def test_a_sleeping_thread_does_not_wait() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        run, wait = _share_of(proc.pid, 1.0)
    finally:
        proc.kill()
        proc.wait()
    assert run < 5.0 and wait < 5.0


def test_a_thread_is_found_by_name_and_a_gone_process_has_none() -> None:
    # the first thread of that name: the main thread, or another of this process's threads that
    # inherited its name (the DUT session's CPU sampler; their ids wrap around pid_max)
    name = Path(f"/proc/{os.getpid()}/comm").read_text().strip()
    tid = thread_named(os.getpid(), name)
    assert tid is not None and Path(f"/proc/{os.getpid()}/task/{tid}/comm").read_text().strip() == name
    assert thread_named(os.getpid(), "no such thread") is None
    # sampled while it runs, a window has its share; once it is gone, the same window has none
    # (a meter that never sampled gives none for any thread: that would prove nothing)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    meter = CpuShareMeter("gone", lambda: (proc.pid, proc.pid))
    try:
        meter._sampler.sample()
        start = time.time()
        time.sleep(0.3)
        assert meter.window(start, time.time()) is not None
    finally:
        proc.kill()
        proc.wait()
    assert meter.window(start, time.time()) is None


def _context(tmp_path: Path) -> SimpleNamespace:
    profile = ThresholdProfile.model_validate(
        {"profile": "t", "scenarios": {"length_udp": {"default": {"max_loss_pct": 0.5}}}}
    )
    dut = SimpleNamespace(config=SimpleNamespace(LOCAL=True, name="qemu"), adapter=SimpleNamespace(placed="CPU 1"))
    return SimpleNamespace(thresholds=profile, recorder=Recorder(tmp_path, None), baseline=None, dut=dut)


def _record(case: str, loss: float, wait_pct: float | None) -> CaseRecord:
    rec = make_record("length_udp", case, "qemu", summarize([39.7]), 44.17)
    rec.loss_pct = loss
    if wait_pct is not None:
        rec.extra["dut_cpu"] = {"thread": "vCPU", "run_pct": 70.0, "wait_pct": wait_pct}
    return rec


def test_a_case_missed_while_the_dut_waited_for_a_host_core_is_the_duts(tmp_path: Path) -> None:
    """A DUT that needs more CPU per frame waits more on a shared host too: the wait is evidence
    beside the DUT's failure, never its excuse."""
    hil = _context(tmp_path)
    waited = _record("dut_rx-l500", 1.2, wait_pct=21.0)
    with pytest.raises(AssertionError, match=BELOW_THRESHOLD) as exc:
        check(hil, "length_udp", [waited, _record("dut_rx-l1448", 0.1, wait_pct=20.0)])  # type: ignore[arg-type]
    assert not isinstance(exc.value, BenchFault)
    assert "loss 1.200 % > threshold 0.500 %" in str(exc.value)
    assert "[vCPU waited for its core 21.0 % of the case, ran 70.0 %]" in str(exc.value)
    assert waited.verdict == "below threshold"


def test_a_dut_that_waited_and_met_its_limits_passes(tmp_path: Path) -> None:
    rec = _record("dut_rx-l500", 0.1, wait_pct=30.0)
    check(_context(tmp_path), "length_udp", [rec])  # type: ignore[arg-type]
    assert rec.verdict == "passed"


def test_a_short_wait_is_not_said(tmp_path: Path) -> None:
    recs = [_record("dut_rx-l500", 1.2, wait_pct=0.3)]
    with pytest.raises(AssertionError, match=BELOW_THRESHOLD) as exc:
        check(_context(tmp_path), "length_udp", recs)  # type: ignore[arg-type]
    assert "waited" not in str(exc.value)
