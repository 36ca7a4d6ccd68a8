"""The history gate in both workflows as shipped, GitHub's executed by act and GitLab's by
gitlab-ci-local (tests/support/workflow_runs.py): three pushes of the virtual bench's job, each its
own `./suite ci` with its set-up in a fresh workspace and the history restored from the cache the
previous one saved; no baseline file. Pushes 1 and 2 (the firmware as built) pass; then a new
commit, whose run (push 3) plants a 3 % step in the DUT's UDP sender and 0.3 % silent receive loss
(--plant-defect) under thresholds loose enough to pass them: push 3 fails (exit 1) as a regression
on both metrics, naming its run and its build. (`./suite test --extended`; the test command runs the
same gate through child runs, tests/suite/test_history_gate.py.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.suite.test_history_gate import LOOSE, STEP
from tests.support.workflow_runs import JobRun, run_github_job, run_gitlab_job, scratch_repo

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow, pytest.mark.extended]

CASES = "-m baseline -k udp --repeat 3 --duration 2 --wire-capture off --link-mbit 20 --confirm-misses"
GITLAB_JOB = "hil:virtual"


def _three_pushes(tmp_path: Path, push: Callable[[Path, int, dict[str, str]], JobRun]) -> tuple[JobRun, Path]:
    """Pushes 1-2 unchanged (each must pass), a new commit, push 3 with the planted step; push 3's
    job and the repository."""
    repo = scratch_repo(tmp_path / "repo")
    loose = tmp_path / "loose.yaml"
    loose.write_text(LOOSE)
    addopts = f"{CASES} --thresholds {loose}"
    for n in (1, 2):
        job = push(repo, n, {"PYTEST_ADDOPTS": addopts})
        assert job.exit_code == 0, f"unchanged push {n}: exit {job.exit_code}\n{job.log[-4000:]}"
    subprocess.run(["git", "-C", str(repo), "commit", "--quiet", "--allow-empty", "-m", "firmware: the planted step"],
                   check=True)  # fmt: skip
    return push(repo, 3, {"PYTEST_ADDOPTS": f"{addopts} --plant-defect {STEP}"}), repo


def _check_regression(third: JobRun, saved: Path) -> None:
    assert third.exit_code == 1, f"exit {third.exit_code}\n{third.log[-4000:]}"
    runs = [json.loads(x) for x in saved.read_text().splitlines() if x.strip()]
    assert len(runs) == 3, [r["run"] for r in runs]
    for key in ("baseline/udp-dut_tx/mbps", "baseline/udp-dut_rx/loss_pct"):
        line = next((x for x in third.log.splitlines() if f"trend: REGRESSION {key}:" in x), None)
        assert line is not None, third.log[-4000:]
        assert f"since run {runs[2]['run']}, build " in line and f"planted: {STEP}" in line, line
    # the new commit is another build: its version (git describe) and so its image's digest
    assert runs[2]["firmware"]["build"] != runs[1]["firmware"]["build"], [r["firmware"] for r in runs]


def test_the_github_workflow_fails_the_third_push_as_a_regression_against_its_history(tmp_path: Path) -> None:
    stores = tmp_path / "stores"
    third, _ = _three_pushes(tmp_path, lambda repo, n, env: run_github_job(repo, "virtual", stores, 200 + n, env))
    assert "Job failed" in third.log, third.log[-4000:]
    _check_regression(third, stores / "cache" / "hil-history-virtual--203-1" / "results" / "ci" / "history" /
                      "metrics.jsonl")  # fmt: skip


def test_the_gitlab_pipeline_fails_the_third_push_as_a_regression_against_its_history(tmp_path: Path) -> None:
    def push(repo: Path, n: int, env: dict[str, str]) -> JobRun:
        attempts = run_gitlab_job(repo, GITLAB_JOB, env)
        assert len(attempts) == 1, [a.exit_code for a in attempts]  # exit 1 and 0 are never retried
        return attempts[0]

    try:
        third, repo = _three_pushes(tmp_path, push)
        assert third.tool_exit != 0, third.log[-4000:]  # the pipeline failed
        caches = sorted((repo / ".gitlab-ci-local").glob("cache/hil-history-virtual-*"))
        assert len(caches) == 1, caches  # hil-history-virtual-<branch slug>, pushed after the job (when: always)
        _check_regression(third, caches[0] / "results" / "ci" / "history" / "metrics.jsonl")
    finally:  # the jobs' workspaces (copies with their set-up, 200 MB each)
        shutil.rmtree(tmp_path / "repo" / ".gitlab-ci-local" / "builds", ignore_errors=True)
