"""The workflows' ESP32 job as shipped, on a PC without ESP-IDF or a board: `./suite ci --bench
bench/esp32.yaml` makes the ESP-IDF builds it flashes in the job (a clean checkout has none), here
with a stand-in idf.py (tests/support/stand-in-idf: it writes a build laid out as ESP-IDF's, whose
images no board can run - this proves the wiring, not ESP-IDF), then stops at the missing board as
a bench fault (75), which the workflow retries once; with no ESP-IDF at all the job ends at once
with one line naming what is missing, exit 4, not retried. The Wi-Fi secret reaches the job as
the repository secret and appears in no log."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hil.paths import PROJECT_ROOT
from tests.support.workflow_runs import run_github_job, run_gitlab_job, scratch_repo

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

STAND_IN = PROJECT_ROOT / "tests" / "support" / "stand-in-idf"
NO_BOARD = "serial port /dev/ttyUSB0 does not exist"
NO_IDF = "this PC has no ESP-IDF (idf.py on PATH, or IDF_PATH)"


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    yield scratch_repo(tmp_path / "repo")
    shutil.rmtree(tmp_path / "repo" / ".gitlab-ci-local" / "builds", ignore_errors=True)


def job_env(tmp_path: Path, with_idf: bool) -> tuple[dict[str, str], str]:
    psk = "t-" + secrets.token_hex(8)
    path = os.environ["PATH"]
    env = {"HIL_WIFI_PSK": psk, "STAND_IN_IDF_LOG": str(tmp_path / "idf.log"), "IDF_PATH": ""}
    env["PATH"] = f"{STAND_IN}{os.pathsep}{path}" if with_idf else path
    return env, psk


def builds_made(tmp_path: Path) -> list[str]:
    log = tmp_path / "idf.log"
    return [line.split()[-1] for line in log.read_text().splitlines()] if log.exists() else []


def test_the_github_esp32_job_builds_its_firmware_then_meets_the_missing_board(tmp_path: Path, repo: Path) -> None:
    env, psk = job_env(tmp_path, with_idf=True)
    run = run_github_job(repo, "esp32", tmp_path / "stores", 201, env, secrets=("HIL_WIFI_PSK",))
    assert run.exit_code == 75, run.log[-4000:]  # the bench's (no board): retried once, then the job fails
    assert run.log.count(NO_BOARD) >= 2, run.log[-4000:]
    assert f"flashes (esp32: default best) with {STAND_IN / 'idf.py'}" in run.log
    assert builds_made(tmp_path) == ["variant=default", "variant=best"] * 2  # each attempt builds both
    assert psk not in run.log


def test_the_github_esp32_job_without_esp_idf_says_what_is_missing(tmp_path: Path, repo: Path) -> None:
    env, psk = job_env(tmp_path, with_idf=False)
    assert shutil.which("idf.py", path=env["PATH"]) is None
    run = run_github_job(repo, "esp32", tmp_path / "stores", 202, env, secrets=("HIL_WIFI_PSK",))
    assert run.exit_code == 4, run.log[-4000:]  # a person's to fix: never retried
    assert run.log.count(NO_IDF) == 1, run.log[-4000:]
    assert NO_BOARD not in run.log and psk not in run.log


@pytest.mark.extended  # `./suite test --extended` (time: the GitHub job above is the same `./suite ci`)
def test_the_gitlab_esp32_job_builds_its_firmware_then_meets_the_missing_board(tmp_path: Path, repo: Path) -> None:
    env, psk = job_env(tmp_path, with_idf=True)
    attempts = run_gitlab_job(repo, "hil:esp32", env)
    assert [a.exit_code for a in attempts] == [75, 75], attempts[-1].log[-4000:]
    assert all(NO_BOARD in a.log and psk not in a.log for a in attempts)
    assert builds_made(tmp_path) == ["variant=default", "variant=best"] * 2
