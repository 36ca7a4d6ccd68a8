"""One commit's numbers: a child run of the suite (pytest tests/hil) on the bench for the one
case, its firmware taken from the commit's firmware directory (HIL_FIRMWARE_DIR: built there on
demand, as the case's configurations need), repeated; the case's values from results.jsonl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from hil.bisect.commits import BisectError
from hil.bisect.sources import Unbuildable
from hil.bisect.verdict import Sample
from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT
from hil.plumbing.proc import interrupt

CLEANUP_GRACE_S = 60.0  # an interrupted run removes its namespaces, processes and captures first


@dataclass(frozen=True)
class Measured:
    case: str  # scenario/case
    unit: str
    sample: Sample
    seconds: float


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def case_values(results: Path) -> tuple[str, str, list[float]]:
    """The one case's name, unit and per-repetition values in a run's results.jsonl."""
    jsonl = results / "results.jsonl"
    lines = jsonl.read_text().splitlines() if jsonl.is_file() else []
    rows = [json.loads(x) for x in lines if x.strip()]
    cases = {f"{r['scenario']}/{r['case']}": r for r in rows if "values" in r}
    if len(cases) != 1:
        raise BisectError(f"-k selected {len(cases)} cases with numbers ({', '.join(sorted(cases)) or 'none'}): "
                          "name exactly one", ExitCode.USAGE_ERROR)  # fmt: skip
    ((name, rec),) = cases.items()
    return name, str(rec.get("unit") or ""), [float(v) for v in rec["values"]]


def _recorded(results: Path) -> bool:
    jsonl = results / "results.jsonl"
    return jsonl.is_file() and any('"values"' in x for x in jsonl.read_text().splitlines())


def measure(run_args: list[str], results: Path, env: dict[str, str]) -> Measured:
    """A child run on a commit's firmware (its bench file and environment in run_args and env); a
    bench fault is measured once more, then ends the bisection; a firmware configuration that
    fails to build on demand makes the commit unbuildable."""
    argv = [sys.executable, "-m", "pytest", "tests/hil", "-p", "no:cacheprovider", "-q", "--results-dir",
            str(results), f"--alluredir={results / 'allure-results'}", *run_args]  # fmt: skip
    start = time.monotonic()
    for attempt in (1, 2):
        proc = subprocess.Popen(argv, cwd=PROJECT_ROOT, env={**os.environ, **env},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        try:
            out, _ = proc.communicate()
        except BaseException:  # Ctrl-C: the run ends as on Ctrl-C, cleaning its bench up, then we do
            interrupt(proc, grace_s=CLEANUP_GRACE_S)
            raise
        (results / f"run-{attempt}.log").write_text(out)
        if "building firmware config" in out and "failed:" in out:
            line = next(ln for ln in out.splitlines() if "building firmware config" in ln)
            raise Unbuildable(line.split("BenchError: ", 1)[-1].strip()[:300])
        if proc.returncode == ExitCode.USAGE_ERROR and "not a firmware directory" in out:  # (hil.paths)
            raise Unbuildable("the commit's firmware directory has no CMakePresets.json")
        if proc.returncode in (ExitCode.PASSED, ExitCode.DUT_FAILED):  # numbers either way: a miss is a number
            break
        if proc.returncode == ExitCode.BENCH_FAULT and attempt == 1:
            (results / "results.jsonl").unlink(missing_ok=True)  # the retry's numbers alone count
            continue
        if proc.returncode == ExitCode.NO_TESTS:
            raise BisectError(f"-k selected no test (run: {results / 'run-1.log'})", ExitCode.USAGE_ERROR)
        if proc.returncode < 0 or proc.returncode in (ExitCode.INTERRUPTED, 129, 130, 143):  # a signal
            raise BisectError(
                f"the run ({results}) was interrupted (exit code {proc.returncode})", ExitCode.INTERRUPTED
            )
        code = (
            proc.returncode if proc.returncode in (ExitCode.USAGE_ERROR, ExitCode.BENCH_FAULT) else ExitCode.SUITE_ERROR
        )
        raise BisectError(f"the run ({results}) ended with exit code {proc.returncode}:\n{_tail(out)}", code)
    if proc.returncode == ExitCode.DUT_FAILED and not _recorded(results):
        # a DUT that crashed or hung before the case measured gives no number to place the commit by
        why = f"the run ({results}) recorded no number: the DUT failed before the case measured"
        raise BisectError(f"{why} (a different fault than the ends' numbers):\n{_tail(out)}", ExitCode.DUT_FAILED)
    name, unit, values = case_values(results)
    return Measured(name, unit, Sample(tuple(values)), time.monotonic() - start)
