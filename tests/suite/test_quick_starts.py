"""The quick starts' dry run: a clone of this repository, as a user makes one, runs the pages'
commands up to their first hardware step, as written (a fresh checkout: set-up, a first report on
the virtual bench, doctor). Both pages start with the same commands
(tests/selftest/test_quick_start_pages.py), so they run once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.quick_start_pages import PAGES, commands
from tests.support.workflow_runs import scratch_repo

# (time: the set-up of a fresh clone and a report; the test command's matrices run the same commands)
pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow, pytest.mark.extended]


def test_the_quick_starts_run_on_the_virtual_bench_up_to_their_hardware_step(tmp_path: Path) -> None:
    clone = scratch_repo(tmp_path / "hil-suite")
    before, _ = commands(PAGES[0])
    outputs = []
    for line in before:
        run = subprocess.run(["bash", "-c", line], cwd=clone, capture_output=True, text=True, timeout=1500, check=False)
        out = run.stdout + run.stderr
        assert run.returncode == 0, f"{line}: exit {run.returncode}\n{out[-3000:]}"
        outputs.append(out)
    assert (clone / "results" / "report" / "index.html").is_file()
    assert "doctor: the bench can run" in outputs[-1], outputs[-1][-2000:]
