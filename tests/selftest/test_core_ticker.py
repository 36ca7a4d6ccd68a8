"""The DUT core's ticker (tester/coreticker.c, hil.plumbing.core_ticker): on the asked CPU at the
bench's priority, its session too, gone when the context ends; bad arguments and a missing
binary are one line each."""

import os
import subprocess
import time
from pathlib import Path

import pytest

import hil.plumbing.core_ticker as ticker_module
from hil.errors import BenchError
from hil.plumbing.core_ticker import PERIOD_US, TICKER, core_ticker
from hil.plumbing.cpu_plan import bench_placed, make_plan
from tests.support.processes import parent_of, pgrep

pytestmark = pytest.mark.selftest


def _ours() -> list[int]:
    """This process's tickers (a run of the suite beside it has its own)."""
    pids = [int(line.split()[0]) for line in pgrep("-a", "-x", "coreticker")]
    return [pid for pid in pids if parent_of(pid) == os.getpid()]


def test_the_ticker_runs_on_its_core_at_the_bench_priority_and_ends_with_the_context() -> None:
    if os.geteuid() != 0:
        pytest.skip("the ticker takes nice -20: root only (the test command runs as root)")
    cpu = max(os.sched_getaffinity(0))
    with core_ticker(cpu) as said:
        assert said.startswith(f"CPU {cpu}, every {PERIOD_US} us"), said
        (pid,) = _ours()
        assert os.sched_getaffinity(pid) == {cpu}
        assert os.getpriority(os.PRIO_PROCESS, pid) == -20
        group = Path(f"/proc/{pid}/autogroup")
        assert not group.exists() or group.read_text().split()[-1] == "-20"
    deadline = time.monotonic() + 5
    while _ours() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _ours()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["x", "1000", "100"], "CPU must be a whole number from 0 to 1023 (got 'x')"),
        (["0", "50", "100"], "PERIOD_US must be a whole number from 100 to 100000 (got '50')"),
        (["0", "1000", "99"], "SLICE_US must be a whole number from 100 to 100000 (got '99')"),
        (["0"], "usage: coreticker CPU PERIOD_US SLICE_US"),
    ],
)
def test_bad_arguments_are_one_line(args: list[str], message: str) -> None:
    out = subprocess.run([str(TICKER), *args], capture_output=True, text=True, timeout=10, check=False)
    expected = message if message.startswith("usage") else f"coreticker: {message}"
    assert out.returncode == 2 and out.stderr.strip() == expected, out.stderr


def test_a_missing_ticker_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ticker_module, "TICKER", tmp_path / "coreticker")
    missing = r"coreticker is missing: ./suite setup builds it \(tester/build.sh\)"
    with pytest.raises(BenchError, match=missing), core_ticker(0):
        pass


def test_the_cpu_plan_runs_the_ticker_on_the_duts_core_for_its_context() -> None:
    """bench_placed (every virtual bench's CPU plan) holds the ticker on the plan's DUT core and
    says so; without it a normal load holds that core for whole 4-ms ticks again."""
    if os.geteuid() != 0:
        pytest.skip("the CPU plan takes nice -20: root only (the test command runs as root)")
    plan = make_plan()
    if plan is None:
        pytest.skip("one CPU: no CPU plan, no DUT core to tick")
    with bench_placed(plan) as placement:
        assert f"the DUT's core ticked every {PERIOD_US / 1000:g} ms" in placement, placement
        (pid,) = _ours()
        assert os.sched_getaffinity(pid) == set(plan.dut_cpus)
    assert not _ours()
