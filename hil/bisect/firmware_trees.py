"""The firmware at the commits a bisection tests: a git worktree per commit under a temporary
directory (removed at the end, also after Ctrl-C or an error), or the checkout itself where its
firmware directory is that commit's (the same tree and no local change: its builds are reused).
A worktree shares the checkout's fetched third-party source (firmware/.deps: lwIP, verified by
its fetch script), so a commit's build compiles but downloads nothing."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Self

from hil.bisect.commits import Commit, git

FIRMWARE = "firmware"


class FirmwareTrees:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.root: Path | None = None
        self.worktrees: list[Path] = []

    def __enter__(self) -> Self:
        self.root = Path(tempfile.mkdtemp(prefix="hil-bisect-"))
        return self

    def __exit__(self, *exc: object) -> None:
        for tree in self.worktrees:
            subprocess.run(["git", "-C", str(self.repo), "worktree", "remove", "--force", str(tree)],
                           capture_output=True, check=False)  # fmt: skip
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
        subprocess.run(["git", "-C", str(self.repo), "worktree", "prune"], capture_output=True, check=False)

    def checkout_is(self, c: Commit) -> bool:
        """The checkout's firmware directory is exactly this commit's (same tree, nothing changed)."""
        head = git(self.repo, "rev-parse", f"HEAD:{FIRMWARE}")
        changed = git(self.repo, "status", "--porcelain", "--untracked-files=no", "--", FIRMWARE)
        return head == c.tree and not changed

    def firmware_dir(self, c: Commit) -> tuple[Path, str]:
        """The firmware directory to build and run this commit's firmware from, and how it came."""
        if self.checkout_is(c):
            return self.repo / FIRMWARE, "the checkout's (same firmware tree)"
        assert self.root is not None, "FirmwareTrees is a context manager"
        tree = self.root / c.short
        git(self.repo, "worktree", "add", "--detach", "--quiet", str(tree), c.sha)
        self.worktrees.append(tree)
        deps = self.repo / FIRMWARE / ".deps"
        if deps.is_dir() and not (tree / FIRMWARE / ".deps").exists():
            (tree / FIRMWARE / ".deps").symlink_to(deps)
        return tree / FIRMWARE, f"worktree {tree}"
