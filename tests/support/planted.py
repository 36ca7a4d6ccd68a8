"""Child runs of the suite on the test command's virtual bench with defects planted in the DUT's
firmware (--plant-defect, hil.dut.planted_defects), and what their JUnit XML says of each case:
how it ended and why. A core of the bench PC can be kept busy for the run (a normal-priority busy
loop, as `./suite test --busy 1`)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hil.plumbing.cpu_plan import machine_cpus
from tests.support.child_suite import run_suite

THRESHOLDS = "thresholds/virtual-20m.yaml"  # the test command's virtual bench: the link at 20 Mbit/s (docs/testing.md)
# as the test command runs the virtual bench's matrix: one repetition, 2-s tests, a miss measured again
RUN_ARGS = ("--link-mbit", "20", "--thresholds", THRESHOLDS, "--profile", "quick", "--confirm-misses",
            "--duration", "2", "--capacity-lengths", "1448", "--stream-duration", "5")  # fmt: skip


@dataclass(frozen=True)
class Outcome:
    case: str  # scenario/case as the test id gives it
    status: str  # passed | failed | error | skipped
    message: str
    seconds: float = 0.0

    @property
    def bench_fault(self) -> bool:
        return "BENCH FAULT" in self.message or "bench fault" in self.message.split(":", 1)[0]


@dataclass(frozen=True)
class ChildRun:
    returncode: int
    outcomes: dict[str, Outcome]
    records: list[dict[str, object]]
    stdout: str
    seconds: float  # the child run's wall time

    def tail(self) -> str:
        return self.stdout[-4000:]


def _as_a_user_load() -> None:
    """A busy loop as `./suite test --busy` starts it: normal priority, free to run on any CPU of the
    machine (not the placement of the test process that starts it, hil.plumbing.cpu_plan)."""
    os.setpriority(os.PRIO_PROCESS, 0, 0)
    os.sched_setaffinity(0, machine_cpus())


@contextlib.contextmanager
def busy_cores(n: int) -> Iterator[None]:
    """n normal-priority busy loops (`./suite test --busy n`) for the context."""
    loops = [
        subprocess.Popen(["bash", "-c", "while :; do :; done"], preexec_fn=_as_a_user_load, start_new_session=True)
        for _ in range(n)
    ]  # each in a session of its own, as another job's load is (hil.plumbing.cpu_plan.raise_session)
    try:
        yield
    finally:
        for p in loops:
            p.kill()
            p.wait()


def junit_outcomes(path: Path) -> dict[str, Outcome]:
    out = {}
    for tc in ET.parse(path).iter("testcase"):
        case = tc.get("name", "").split("[", 1)[-1].rstrip("]")
        status, message = "passed", ""
        for kind in ("failure", "error", "skipped"):
            found = tc.find(kind)
            if found is not None:
                status, message = kind.replace("failure", "failed"), found.get("message") or ""
                break
        out[case] = Outcome(case, status, message, float(tc.get("time", "0")))
    return out


def child_run(
    results: Path, selection: tuple[str, ...], planted: str | None, busy: int, timeout: float = 600
) -> ChildRun:
    """The selected cases on the test command's virtual bench, `planted` defects (None: the
    firmware as built), `busy` cores kept busy."""
    args = [*RUN_ARGS, *selection, "--junitxml", str(results / "junit.xml")]
    args += ["--plant-defect", planted] if planted else []
    began = time.monotonic()
    with busy_cores(busy):
        proc = run_suite(results, *args, timeout=timeout, tests="tests/hil")
    seconds = time.monotonic() - began
    outcomes = junit_outcomes(results / "junit.xml") if (results / "junit.xml").exists() else {}
    jsonl = results / "results.jsonl"
    records = [json.loads(x) for x in jsonl.read_text().splitlines() if x.strip()] if jsonl.exists() else []
    return ChildRun(
        proc.returncode, outcomes, [r for r in records if "values" in r], proc.stdout + proc.stderr, seconds
    )
