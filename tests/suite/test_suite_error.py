"""A bug of the suite's outside any case (here: the run summary's writer raising) ends the run as
a suite error (exit 3) with one line saying so, not as the DUT's failure (exit 1) after a bare
traceback, which CI would have reported as "DUT failure, do not retry"."""

from __future__ import annotations

from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from tests.support.break_summary import PLANTED
from tests.support.child_suite import run_suite
from tests.support.planted import RUN_ARGS

pytestmark = [pytest.mark.virtual_bench]


def test_an_exception_writing_the_run_summary_is_a_suite_error(tmp_path: Path) -> None:
    proc = run_suite(tmp_path / "results", *RUN_ARGS, "-m", "baseline", "-k", "udp-dut_rx",
                     "-p", "tests.support.break_summary", tests="tests/hil", timeout=120)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == ExitCode.SUITE_ERROR, f"exit {proc.returncode}\n{out[-3000:]}"
    line = next((x for x in out.splitlines() if x.startswith("hil: SUITE ERROR")), "")
    assert "the run summary" in line and PLANTED in line, out[-3000:]
    assert "1 passed" in out, "the case itself passed: only the summary failed"
