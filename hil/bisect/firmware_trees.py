"""Checkouts of other commits for a bisection: git worktrees under one temporary directory,
removed at the end, also after Ctrl-C or an error (and pruned from their repositories)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Self

from hil.bisect.commits import Commit, git


class Worktrees:
    def __init__(self) -> None:
        self.root: Path | None = None
        self.made: list[tuple[Path, Path]] = []  # (repository, worktree)

    def __enter__(self) -> Self:
        self.root = Path(tempfile.mkdtemp(prefix="hil-bisect-"))
        return self

    def __exit__(self, *exc: object) -> None:
        for repo, tree in self.made:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)],
                           capture_output=True, check=False)  # fmt: skip
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
        for repo in {r for r, _ in self.made}:
            subprocess.run(["git", "-C", str(repo), "worktree", "prune"], capture_output=True, check=False)

    def add(self, repo: Path, c: Commit) -> Path:
        """A checkout of the commit (detached), made once per bisection and commit."""
        assert self.root is not None, "Worktrees is a context manager"
        tree = self.root / f"{repo.name}-{c.short}"
        if not tree.exists():
            git(repo, "worktree", "add", "--detach", "--quiet", str(tree), c.sha)
            self.made.append((repo, tree))
        return tree
