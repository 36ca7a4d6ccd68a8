"""`./suite bisect` on the virtual bench, against a slowdown planted in a throw-away branch of the
project's own firmware: eight commits after the checkout's HEAD, each changing the firmware tree
(so each would need its own build), the fifth halving lwIP's receive window (lwipopts.h: TCP_WND
= FW_TCP_WND_MSS x MSS / 2). Measured on the DUT window ladder's 4-segment case behind the
firmware's 20-ms delay line, where the rate is one window per round trip by construction
(2.3 Mbit/s, halved by the planted commit): the bisection names the fifth commit, with the
numbers of each commit it measured, after at most four builds (the good end is the checkout's
own firmware, already built), and leaves no worktree, branch or process behind.

The branch is written with git's plumbing (hash-object, a private index, commit-tree) under
refs/hil-test/, never checked out, and deleted at the end; nothing in the checkout changes."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT

# (`./suite test --extended`: left out of the test command for its time, 90 s here)
pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow, pytest.mark.extended]

REF = "refs/hil-test/bisect-planted"
COMMITS, PLANTED = 8, 5
LWIPOPTS = "firmware/common/lwip-port/include/lwipopts.h"
WINDOW = "#define TCP_WND (FW_TCP_WND_MSS * TCP_MSS)"
HALVED = "#define TCP_WND (FW_TCP_WND_MSS * TCP_MSS / 2)"
NOTE = "firmware/README.md"
CASE = "window_dut and dut_rx-wnd4"
GIT_ID = {"GIT_AUTHOR_NAME": "hil test", "GIT_AUTHOR_EMAIL": "hil@test.invalid",
          "GIT_COMMITTER_NAME": "hil test", "GIT_COMMITTER_EMAIL": "hil@test.invalid"}  # fmt: skip


def git(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    proc = subprocess.run(["git", "-C", str(PROJECT_ROOT), *args], input=stdin, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=True)  # fmt: skip
    return proc.stdout.strip()


@pytest.fixture
def planted(tmp_path: Path) -> Iterator[list[str]]:
    """The throw-away branch's commits, oldest first (its base: HEAD)."""
    index = {**GIT_ID, "GIT_INDEX_FILE": str(tmp_path / "index")}
    git("read-tree", "HEAD", env=index)
    parent, shas = git("rev-parse", "HEAD"), []
    note = git("show", f"HEAD:{NOTE}")
    lwipopts = git("show", f"HEAD:{LWIPOPTS}")
    assert WINDOW in lwipopts, f"{LWIPOPTS} no longer defines TCP_WND as the test plants it"
    for k in range(1, COMMITS + 1):
        if k == PLANTED:
            path, text, subject = LWIPOPTS, lwipopts.replace(WINDOW, HALVED) + "\n", "Halve lwIP's receive window"
        else:
            note += f"\n<!-- bisect test commit {k} -->\n"
            path, text, subject = NOTE, note, f"firmware notes, commit {k}"
        blob = git("hash-object", "-w", "--stdin", stdin=text)
        git("update-index", "--cacheinfo", f"100644,{blob},{path}", env=index)
        tree = git("write-tree", env=index)
        parent = git("commit-tree", tree, "-p", parent, "-m", subject, env=index)
        shas.append(parent)
    git("update-ref", REF, parent)
    try:
        yield shas
    finally:
        git("update-ref", "-d", REF)


def test_bisect_finds_the_planted_slowdown_in_at_most_four_builds(planted: list[str], tmp_path: Path) -> None:
    worktrees_before = git("worktree", "list", "--porcelain")
    proc = subprocess.run(
        ["./suite", "bisect", "--good", "HEAD", "--bad", REF, "-k", CASE, "--repeat", "2",
         "--results-dir", str(tmp_path / "bisect"), "--", "--duration", "1", "--wire-capture", "off"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=1500, check=False,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    print(out)
    assert proc.returncode == ExitCode.PASSED, out[-4000:]
    assert f'first bad commit: {planted[PLANTED - 1]} "Halve lwIP\'s receive window"' in out, out[-3000:]
    builds = re.search(r"builds: (\d+) in the bisection after the ends' (\d+) \((\d+) in all", out)
    assert builds is not None, out[-2000:]
    assert int(builds[3]) <= 4 and int(builds[1]) <= 3, builds[0]
    # every commit measured is listed with its numbers: the two ends and the bisection's
    table = out.split("the commits measured", 1)[1]
    rows = re.findall(r"^  ([0-9a-f]{10})  .*?\s+(\d+\.\d+) Mbit/s", table, re.M)
    assert len(rows) >= 4 and {planted[-1][:10], planted[PLANTED - 1][:10]} <= {r[0] for r in rows}, table
    rates = {sha: float(rate) for sha, rate in rows}
    good_end = float(re.search(r"good end ([\d.]+) Mbit/s", out)[1])  # type: ignore[index]
    assert rates[planted[PLANTED - 1][:10]] == pytest.approx(good_end / 2, rel=0.1), (rates, good_end)
    assert git("worktree", "list", "--porcelain") == worktrees_before
