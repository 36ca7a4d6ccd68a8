"""The commits a bisection walks: the ancestry path from the good end (excluded) to the bad end
(included), oldest first, each with the tree of what it builds."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


class BisectError(Exception):
    """A bisection that cannot go on, in one line; `code` is the exit code it ends with."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    tree: str  # the tree of the built part (the firmware directory): equal trees build the same firmware

    @property
    def short(self) -> str:
        return self.sha[:10]


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, ["git", *args], proc.stdout, proc.stderr)
    return proc.stdout.strip()


def resolve(repo: Path, ref: str, what: str, usage: int) -> str:
    """The commit `ref` names in `repo`, or one line saying it names none."""
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except subprocess.CalledProcessError:
        raise BisectError(f"{what} {ref}: not a commit of {repo}", usage) from None


def commit(repo: Path, sha: str, subdir: str) -> Commit:
    subject = git(repo, "log", "-1", "--format=%s", sha)
    try:
        tree = git(repo, "rev-parse", f"{sha}:{subdir}") if subdir else git(repo, "rev-parse", f"{sha}^{{tree}}")
    except subprocess.CalledProcessError:
        tree = ""  # no such directory at that commit: it cannot be built
    return Commit(sha, subject, tree)


def between(repo: Path, good: str, bad: str, subdir: str, usage: int) -> list[Commit]:
    """Good (excluded) to bad (included) along the first-parent ancestry path, oldest first; one
    line when good is not an ancestor of bad or they are the same commit."""
    if good == bad:
        raise BisectError(f"--good and --bad are the same commit ({good[:10]}): nothing to bisect", usage)
    try:
        git(repo, "merge-base", "--is-ancestor", good, bad)
    except subprocess.CalledProcessError:
        raise BisectError(
            f"--good {good[:10]} is not an ancestor of --bad {bad[:10]}: the good end must come first", usage
        ) from None
    shas = git(repo, "rev-list", "--reverse", "--first-parent", "--ancestry-path", f"{good}..{bad}").split()
    if not shas:
        raise BisectError(f"no first-parent path from --good {good[:10]} to --bad {bad[:10]} (a merged branch's "
                          "commit: give the merge or a commit on the main line)", usage)  # fmt: skip
    return [commit(repo, s, subdir) for s in shas]
