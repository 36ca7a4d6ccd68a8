"""The CI workflow files executed end to end on this machine (tests/support/workflow_runs.py: act
for GitHub's, gitlab-ci-local for GitLab's, offline), each job running the real `./suite ci` on the
virtual bench - its own set-up in the job's fresh workspace, then one case: the DUT window ladder's
4-segment case behind the 20-ms delay line, 2.3 Mbit/s by construction (PYTEST_ADDOPTS, which the
job's pytest reads). Per workflow, two pipelines on the virtual bench's job:

1. a bench fault first: the job's first `./suite ci` ends with exit 75 (HIL_BENCH_FAULT_ONCE, an
   injected fault read before set-up), the workflow's retry runs it again and it passes; the
   pipeline passes, JUnit, results, report and metrics are kept as artifacts, the history is saved;
2. a DUT failure: a thresholds file the DUT cannot meet (--thresholds); the suite exits 1, which no
   workflow retries, and the pipeline fails; the history the first pipeline saved was restored
   before the run (its run is in this one's history) and is saved again with this run added."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.workflow_runs import run_github_job, run_gitlab_job, safe_job_name, scratch_repo

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

CASE = '-k "window_dut and dut_rx-wnd4" --repeat 1 --duration 2 --wire-capture off'
CASE_NAME = "window_dut/dut_rx-wnd4"


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """A clone of the checkout's HEAD the tools run in; the jobs' workspaces (copies with their
    set-up, 200 MB each) are removed after the test, act's by itself (--rm), gitlab-ci-local's here."""
    yield scratch_repo(tmp_path / "repo")
    shutil.rmtree(tmp_path / "repo" / ".gitlab-ci-local" / "builds", ignore_errors=True)


def unmeetable(tmp_path: Path) -> str:
    path = tmp_path / "unmeetable.yaml"
    path.write_text("profile: unmeetable\nscenarios:\n  window_dut:\n    dut_rx-wnd4: {min_mbps: 1000}\n")
    return f"{CASE} --thresholds {path}"


def tail(log: str) -> str:
    return log[-5000:]


def junit_case(results: Path) -> tuple[dict[str, str], str | None]:
    """The case's JUnit properties and failure message (None: passed)."""
    for case in ET.parse(results / "junit.xml").getroot().iter("testcase"):
        if CASE_NAME in case.get("name", ""):
            failure = case.find("failure")
            props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
            return props, None if failure is None else failure.get("message", "")
    raise AssertionError(f"no {CASE_NAME} in {results / 'junit.xml'}")


def history_runs(history: Path) -> list[str]:
    return [json.loads(line)["run"] for line in (history / "metrics.jsonl").read_text().splitlines() if line.strip()]


def kept_results(results: Path) -> None:
    """What a CI job keeps of a run: JUnit with the case's numbers, results, report, metrics."""
    props, failure = junit_case(results)
    assert failure is None and float(props[f"{CASE_NAME}/mbps"]) > 2, (props, failure)
    for name in ("results.jsonl", "summary.csv", "metrics.prom", "quality-gate.txt", "report/index.html"):
        assert (results / name).is_file(), f"{name} not kept in {results}"


def test_the_github_workflow_retries_a_bench_fault_fails_a_dut_failure_and_carries_its_history(
    tmp_path: Path, repo: Path
) -> None:
    stores = tmp_path / "stores"
    token = tmp_path / "bench-fault-once"
    token.write_text("")

    first = run_github_job(repo, "virtual", stores, 101, {"PYTEST_ADDOPTS": CASE, "HIL_BENCH_FAULT_ONCE": str(token)})
    assert first.tool_exit == 0 and first.exit_code == 0, tail(first.log)
    assert "bench fault (exit 75): retrying once" in first.log and not token.exists(), tail(first.log)
    assert "Job succeeded" in first.log, tail(first.log)
    kept_results(stores / "artifacts" / "101" / "hil-virtual-run1")
    saved = stores / "cache" / "hil-history-virtual--101-1" / "results" / "ci" / "history"
    assert len(history_runs(saved)) == 1, tail(first.log)

    second = run_github_job(repo, "virtual", stores, 102, {"PYTEST_ADDOPTS": unmeetable(tmp_path)})
    assert second.tool_exit != 0 and second.exit_code == 1, tail(second.log)
    assert "retrying once" not in second.log and "Job failed" in second.log, tail(second.log)
    assert "Cache restored from key: hil-history-virtual--101-1" in second.log, tail(second.log)
    # the Verdict step failed the job saying why (its one echo, or the job summary's line: act has
    # been seen to drop the last output line of a step that exits at once)
    said = (
        "::error::the DUT missed a threshold or regressed against its history or the baseline (exit 1)",
        "exit 1, DUT missed a threshold",
    )
    assert "Failure - Main Verdict" in second.log and any(s in second.log for s in said), tail(second.log)
    _, failure = junit_case(stores / "artifacts" / "102" / "hil-virtual-run1")
    assert failure is not None and "BELOW THRESHOLD" in failure, failure
    carried = history_runs(stores / "cache" / "hil-history-virtual--102-1" / "results" / "ci" / "history")
    assert len(carried) == 2 and carried[0] == history_runs(saved)[0], carried


@pytest.mark.extended  # `./suite test --extended` (time: the test command runs the GitHub workflow, the same job)
def test_the_gitlab_pipeline_retries_a_bench_fault_fails_a_dut_failure_and_carries_its_history(
    tmp_path: Path, repo: Path
) -> None:
    job = "hil:virtual"
    token = tmp_path / "bench-fault-once"
    token.write_text("")
    state = repo / ".gitlab-ci-local"

    first = run_gitlab_job(repo, job, {"PYTEST_ADDOPTS": CASE, "HIL_BENCH_FAULT_ONCE": str(token)})
    assert [a.exit_code for a in first] == [75, 0], tail(first[-1].log)
    assert "bench fault (exit 75): GitLab retries the job once" in first[0].log and not token.exists()
    kept_results(state / "artifacts" / safe_job_name(job) / "results" / "ci")
    caches = sorted(state.glob("cache/hil-history-virtual-*"))
    assert len(caches) == 1, caches  # hil-history-virtual-<branch slug>
    history = caches[0] / "results" / "ci" / "history"
    runs_first = history_runs(history)
    assert len(runs_first) == 1, runs_first

    second = run_gitlab_job(repo, job, {"PYTEST_ADDOPTS": unmeetable(tmp_path)})
    assert [a.exit_code for a in second] == [1], tail(second[-1].log)  # 1 is never retried
    assert second[0].tool_exit != 0, tail(second[0].log)  # the pipeline failed
    assert "the DUT missed a threshold or regressed against its history or the baseline (exit 1)" in second[0].log
    _, failure = junit_case(state / "artifacts" / safe_job_name(job) / "results" / "ci")
    assert failure is not None and "BELOW THRESHOLD" in failure, failure
    carried = history_runs(history)  # pulled before the job, pushed after it (when: always)
    assert len(carried) == 2 and carried[0] == runs_first[0], carried
