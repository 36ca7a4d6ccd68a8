"""The history gate in the GitHub workflow as shipped, executed by act (tests/support/workflow_runs.py):
four pushes of the virtual bench's job, each its own `./suite ci` with its set-up in a fresh
workspace and the history restored from the cache the previous one saved; no baseline file.
Pushes 1 and 2 (the firmware as built) pass; then a new commit, whose runs (pushes 3 and 4) plant
a 3 % step in the DUT's UDP sender and 0.3 % silent receive loss (--plant-defect) under thresholds
loose enough to pass them: push 3 passes (one run on a new level), push 4 fails (exit 1) as a
regression on both metrics, naming push 3's run and its build. (`./suite test --extended`: the
test command runs the same gate through child runs, tests/suite/test_history_gate.py.)"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.suite.test_history_gate import LOOSE, STEP
from tests.support.workflow_runs import run_github_job, scratch_repo

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow, pytest.mark.extended]

CASES = "-m baseline -k udp --repeat 3 --duration 2 --wire-capture off --link-mbit 20 --confirm-misses"


def test_the_workflow_fails_the_third_push_as_a_regression_against_its_history(tmp_path: Path) -> None:
    repo = scratch_repo(tmp_path / "repo")
    stores = tmp_path / "stores"
    loose = tmp_path / "loose.yaml"
    loose.write_text(LOOSE)
    addopts = f"{CASES} --thresholds {loose}"
    for run_id in (201, 202):
        job = run_github_job(repo, "virtual", stores, run_id, {"PYTEST_ADDOPTS": addopts})
        assert job.exit_code == 0 and "Job succeeded" in job.log, job.log[-4000:]
    subprocess.run(["git", "-C", str(repo), "commit", "--quiet", "--allow-empty", "-m", "firmware: the planted step"],
                   check=True)  # fmt: skip
    stepped = {"PYTEST_ADDOPTS": f"{addopts} --plant-defect {STEP}"}
    job3 = run_github_job(repo, "virtual", stores, 203, stepped)
    assert job3.exit_code == 0, job3.log[-4000:]
    third = run_github_job(repo, "virtual", stores, 204, stepped)
    assert third.exit_code == 1 and "Job failed" in third.log, third.log[-4000:]
    saved = stores / "cache" / "hil-history-virtual--204-1" / "results" / "ci" / "history" / "metrics.jsonl"
    runs = [json.loads(x) for x in saved.read_text().splitlines() if x.strip()]
    assert len(runs) == 4, [r["run"] for r in runs]
    for key in ("baseline/udp-dut_tx/mbps", "baseline/udp-dut_rx/loss_pct"):
        line = next((x for x in third.log.splitlines() if f"trend: REGRESSION {key}:" in x), None)
        assert line is not None, third.log[-4000:]
        assert f"since run {runs[2]['run']}, build " in line and f"planted: {STEP}" in line, line
    # the new commit is another build: its version (git describe) and so its image's digest
    assert runs[2]["firmware"]["build"] != runs[1]["firmware"]["build"], [r["firmware"] for r in runs]
