"""Where a tested commit's firmware comes from, made ready for a run of the suite:

- the project's own firmware (a bench file without `firmware.build`): the commit's `firmware/`
  directory (the checkout's own when it is that commit's tree and unchanged: its builds reused;
  else a worktree's, sharing the checkout's fetched lwIP), which the run builds its configurations
  from as it needs them (HIL_FIRMWARE_DIR);
- a user's firmware (`firmware.build` in the bench file: its repository and build command): the
  command run in a worktree of that repository at the commit, and the bench file given to the run
  with `firmware.image` pointing at the image it made."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import yaml

from hil.bisect.commits import Commit, git
from hil.bisect.firmware_trees import Worktrees
from hil.config.sections import FirmwareBuild
from hil.paths import FIRMWARE_DIR_ENV, PROJECT_ROOT

FIRMWARE = "firmware"


class Unbuildable(Exception):
    """The commit's firmware does not build (git bisect's `skip`)."""


@dataclass(frozen=True)
class Prepared:
    args: list[str]  # the run's options this firmware needs (its bench file)
    env: dict[str, str]
    how: str
    built: bool  # a build of its own (not the checkout's)


class FirmwareSource(Protocol):
    repo: Path
    subdir: str  # the part of the repository's tree that is the firmware ("": all of it)

    def prepare(self, c: Commit, out: Path) -> Prepared: ...


class ProjectFirmware:
    subdir = FIRMWARE

    def __init__(self, worktrees: Worktrees, bench: Path) -> None:
        self.repo, self.worktrees, self.bench = PROJECT_ROOT, worktrees, bench

    def checkout_is(self, c: Commit) -> bool:
        """The checkout's firmware directory is exactly this commit's (same tree, nothing changed)."""
        head = git(self.repo, "rev-parse", f"HEAD:{FIRMWARE}")
        changed = git(self.repo, "status", "--porcelain", "--untracked-files=no", "--", FIRMWARE)
        return head == c.tree and not changed

    def prepare(self, c: Commit, out: Path) -> Prepared:
        args = ["--bench", str(self.bench)]
        if self.checkout_is(c):
            return Prepared(args, {FIRMWARE_DIR_ENV: str(self.repo / FIRMWARE)}, "the checkout's (same tree)", False)
        tree = self.worktrees.add(self.repo, c)
        deps = self.repo / FIRMWARE / ".deps"
        if deps.is_dir() and not (tree / FIRMWARE / ".deps").exists():
            (tree / FIRMWARE / ".deps").symlink_to(deps)
        return Prepared(args, {FIRMWARE_DIR_ENV: str(tree / FIRMWARE)}, f"worktree {tree}", True)


class RepoFirmware:
    subdir = ""

    def __init__(self, worktrees: Worktrees, bench: Path, dut_index: int, build: FirmwareBuild, image: Path) -> None:
        self.repo, self.worktrees, self.bench = build.repo.resolve(), worktrees, bench
        self.dut_index, self.build, self.image = dut_index, build, image.resolve()

    def prepare(self, c: Commit, out: Path) -> Prepared:
        tree = self.worktrees.add(self.repo, c)
        start = time.monotonic()
        log = out / "build.log"
        # its own process group: on its timeout or Ctrl-C, make or ninja under it end with it
        proc = subprocess.Popen(["bash", "-c", self.build.command], cwd=tree, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
        try:
            stdout, stderr = proc.communicate(timeout=self.build.timeout_s)
        except BaseException as exc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            log.write_text(f"$ {self.build.command}\n{stdout}{stderr}\n(ended: {type(exc).__name__})\n")
            if isinstance(exc, subprocess.TimeoutExpired):
                raise Unbuildable(f"`{self.build.command}` took more than {self.build.timeout_s:g} s ({log})") from None
            raise
        proc = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
        log.write_text(f"$ {self.build.command}\n{proc.stdout}{proc.stderr}")
        if proc.returncode != 0:
            last = ((proc.stderr or proc.stdout).strip().splitlines() or ["no output"])[-1]
            raise Unbuildable(f"`{self.build.command}` exited {proc.returncode}: {last.strip()[:200]} ({log})")
        image = tree / self.image.relative_to(self.repo)
        if not image.is_file():
            raise Unbuildable(f"`{self.build.command}` made no {image.relative_to(tree)} ({log})")
        raw = yaml.safe_load(self.bench.read_text())
        fw = raw["duts"][self.dut_index]["firmware"]
        fw["image"] = str(image)
        del fw["build"]
        bench = out / "bench.yaml"
        bench.write_text(yaml.safe_dump(raw, sort_keys=False))
        how = f"built in worktree {tree} ({time.monotonic() - start:.0f} s)"
        return Prepared(["--bench", str(bench)], {}, how, True)
