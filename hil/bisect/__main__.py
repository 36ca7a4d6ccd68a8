"""./suite bisect --good REF [--bad REF] -k CASE [--bench FILE] [--repeat N] [--results-dir DIR]
[--labgrid-place NAME] [-- PYTEST_ARGS], or ./suite bisect --from-history CASE [--history FILE]
[...]: the first commit between a good and a bad end of the
DUT's firmware (the project's, or the repository the bench file's `firmware.build` names) that
changed the case's numbers (slower or faster: whichever way the ends differ).

--from-history takes the ends from a bench's history (hil.bisect.from_history): the commits of the
last run before the case's newest regression and of the run it began with; -k is then the case.

The ends are measured first and must differ (hil.bisect.verdict); then each tested commit, the
middle of the commits still in question, is built, measured and classified as the nearer end, and
the range halves. A commit whose firmware does not build is skipped for a neighbour (git bisect's
`skip`); one that cannot be told from either end is measured again with twice the repetitions,
then the bisection stops saying so. A labgrid place (--labgrid-place) is held for the whole
bisection: every run finds it held for it. Exit code: 0 found, 1 not found (the ends do not
differ, a commit stays unclear, every candidate left fails to build, or a commit's run recorded no
number), 4 usage (an end that does not build too), 75 bench fault, 2 interrupted, 3 a suite error."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import NoReturn

from hil.bench_presets import bench_presets
from hil.bisect.commits import BisectError, Commit, between, commit, resolve
from hil.bisect.firmware_trees import Worktrees
from hil.bisect.from_history import ends_from_history
from hil.bisect.measure import Measured, measure
from hil.bisect.sources import FirmwareSource, ProjectFirmware, RepoFirmware, Unbuildable
from hil.bisect.verdict import Sample, Verdict, classify, ends_apart, welch_t
from hil.config.errors import ConfigError
from hil.dut.bench_file import DEFAULT_BENCH_FILE, load_bench
from hil.errors import BenchError
from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT
from hil.plumbing.labgrid_place import HOLDER_ENV, PlaceLock

USAGE = ExitCode.USAGE_ERROR
NOT_FOUND = ExitCode.DUT_FAILED  # the ends do not differ, or a commit stays unclear


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line and the usage error's exit code, not argparse's 2
        usage = " ".join(self.format_usage().split()).removeprefix("usage: ")
        raise BisectError(f"{message} (usage: {usage})", USAGE)


def parse(argv: list[str]) -> argparse.Namespace:
    p = _Parser(prog="./suite bisect", description=__doc__.split("\n\n")[0])
    p.add_argument("--good", help="a commit whose firmware measures as it should")
    p.add_argument("--bad", default="HEAD", help="a later commit whose firmware measures worse (default: HEAD)")
    p.add_argument("-k", dest="case", help="the case, as pytest -k selects it (exactly one)")
    p.add_argument(
        "--from-history",
        metavar="CASE",
        help="scenario/case[/metric]: the ends from the history's "
        "newest regression of it (instead of --good/--bad; -k defaults to the case)",
    )
    p.add_argument("--history", type=Path, help="the history file (default: results/<bench name>/history/"
                   "metrics.jsonl, where `./suite ci --bench FILE` keeps it)")  # fmt: skip
    p.add_argument("--bench", type=Path, default=DEFAULT_BENCH_FILE, help="the bench file (default: the virtual bench)")
    p.add_argument("--repeat", type=int, default=3, help="repetitions per commit (default 3)")
    p.add_argument("--results-dir", type=Path, default=PROJECT_ROOT / "results" / "bisect")
    p.add_argument("--labgrid-place", help="hold this labgrid place for the whole bisection")
    p.add_argument("pytest_args", nargs="*", help="after --: more options for each run (e.g. --wire-capture off)")
    opt = p.parse_args(argv)
    if opt.repeat < 2:
        raise BisectError(f"--repeat must be at least 2 (got {opt.repeat}): a spread needs two", USAGE)
    if not opt.bench.is_file():
        raise BisectError(f"--bench {opt.bench}: no such file", USAGE)
    if opt.from_history:
        if opt.good:
            raise BisectError("--from-history takes the ends from the history: not with --good", USAGE)
        history = opt.history or PROJECT_ROOT / "results" / opt.bench.stem / "history" / "metrics.jsonl"
        ends = ends_from_history(history, opt.from_history)
        print(f"bisect: {ends.describe()}\nbisect: good {ends.good}, bad {ends.bad}")
        opt.good, opt.bad = ends.good, ends.bad
        opt.case = opt.case or "/".join(opt.from_history.split("/")[:2])  # scenario/case: the test id's part
    if not opt.good or not opt.case:
        raise BisectError("--good and -k are required (or --from-history CASE)", USAGE)
    return opt


@contextlib.contextmanager
def held_place(opt: argparse.Namespace) -> Iterator[dict[str, str]]:
    """The labgrid place locked for the bisection (the runs are told who holds it for them)."""
    if not opt.labgrid_place:
        yield {}
        return
    try:
        dut = load_bench(opt.bench).duts[0]
    except ConfigError as exc:
        raise BisectError(str(exc), USAGE) from None
    section = dut.labgrid
    coordinator = (section.coordinator if section else None) or os.environ.get("LG_COORDINATOR")
    if not coordinator:
        raise BisectError(f"labgrid place {opt.labgrid_place}: no coordinator (bench file or LG_COORDINATOR)", USAGE)
    lock = PlaceLock(opt.labgrid_place, coordinator, section.wait_s if section else 600.0)
    try:
        lock.acquire()
    except BenchError as exc:
        raise BisectError(str(exc), ExitCode.BENCH_FAULT) from None
    print(f"bisect: labgrid place {opt.labgrid_place} held as {lock.holder} for the whole bisection")
    try:
        yield {HOLDER_ENV: lock.holder}
    finally:
        lock.release()


RESULTS_MARK = ".hil-bisect"  # a results folder a bisection made (and may empty again)


def fresh_results_dir(path: Path) -> None:
    """An empty results folder: made, or emptied when an earlier bisection made it; any other
    folder with files in it (the checkout, a run's results) is refused, never deleted."""
    if path.exists():
        if not path.is_dir():
            raise BisectError(f"--results-dir {path} is a file, not a folder", USAGE)
        if any(path.iterdir()) and not (path / RESULTS_MARK).is_file():
            raise BisectError(f"--results-dir {path} has files a bisection did not make: give an empty or new "
                              "folder", USAGE)  # fmt: skip
        shutil.rmtree(path)
    path.mkdir(parents=True)
    (path / RESULTS_MARK).write_text("made by ./suite bisect: emptied by the next bisection into this folder\n")


def firmware_source(opt: argparse.Namespace, worktrees: Worktrees) -> FirmwareSource:
    """The bench file's DUT firmware: a user's, built by its `firmware.build`, or the project's."""
    try:
        dut = load_bench(opt.bench).duts[0]
    except ConfigError as exc:
        raise BisectError(str(exc), USAGE) from None
    fw = dut.firmware
    if fw.build is None:
        # the project's firmware is built per commit only for the kinds that run its presets (not a
        # fixed image, an ESP-IDF project, a black box): hil.bench_presets knows which
        if not bench_presets(opt.bench):
            why = "a fixed firmware.image, an ESP-IDF project, a black box"
            raise BisectError(f"{opt.bench}: its DUT does not run a build of the project's firmware ({why}): every "
                              "commit would be measured on the same firmware; give firmware.build (how to build it "
                              "at a commit)", USAGE)  # fmt: skip
        return ProjectFirmware(worktrees, opt.bench)
    if not (fw.build.repo / ".git").exists():
        raise BisectError(f"{opt.bench}: firmware.build.repo {fw.build.repo} is not a git repository", USAGE)
    assert fw.image is not None  # (the bench file's validation)
    return RepoFirmware(worktrees, opt.bench, 0, fw.build, fw.image)


@dataclass
class Bisection:
    source: FirmwareSource
    run_args: list[str]
    results: Path
    env: dict[str, str]
    by_tree: dict[str, Measured] = field(default_factory=dict)
    builds: int = 0

    def measure(self, c: Commit, role: str, repeat_more: bool = False) -> Measured:
        """The commit's numbers: measured on its firmware, or those of a commit with the same
        firmware tree (not built again); `repeat_more` adds a second run's repetitions."""
        if c.tree in self.by_tree and not repeat_more:
            m = self.by_tree[c.tree]
            print(f"  {c.short}  {role:<10} same firmware tree as a commit measured: {m.sample.text(m.unit)}")
            return m
        if not c.tree:
            raise Unbuildable(f"no {self.source.subdir}/ directory at {c.short}")
        out = self.results / f"{c.short}{'-more' if repeat_more else ''}"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        ready = self.source.prepare(c, out)
        self.builds += ready.built and not repeat_more
        m = measure([*ready.args, *self.run_args], out, self.env | ready.env)
        how = ready.how
        if repeat_more and c.tree in self.by_tree:
            prev = self.by_tree[c.tree]
            m = Measured(m.case, m.unit, Sample(prev.sample.values + m.sample.values), prev.seconds + m.seconds)
        self.by_tree[c.tree] = m
        print(f"  {c.short}  {role:<10} {m.sample.text(m.unit)}  [{m.case}; firmware: {how}; {m.seconds:.0f} s]")
        return m


def _line(c: Commit, m: Measured, v: Verdict | None) -> str:
    verdict = v.text() if v else ""
    return f"  {c.short}  {c.subject[:50]:<50}  {m.sample.median:10.4g} {m.unit:<7} ±{m.sample.sd:<8.2g} {verdict}"


def bisect(opt: argparse.Namespace) -> int:
    with Worktrees() as worktrees:
        return _bisect(opt, firmware_source(opt, worktrees))


def _bisect(opt: argparse.Namespace, source: FirmwareSource) -> int:
    repo = source.repo
    good = commit(repo, resolve(repo, opt.good, "--good", USAGE), source.subdir)
    bad_sha = resolve(repo, opt.bad, "--bad", USAGE)
    commits = between(repo, good.sha, bad_sha, source.subdir, USAGE)
    run_args = ["-k", opt.case, "--repeat", str(opt.repeat)]
    run_args += ["--labgrid-place", opt.labgrid_place] if opt.labgrid_place else []
    run_args += opt.pytest_args
    fresh_results_dir(opt.results_dir)
    print(f"bisect: {len(commits)} commits of {repo} after {good.short} up to {commits[-1].short}; -k {opt.case!r} "
          f"on {opt.bench}, {opt.repeat} repetitions per commit; runs in {opt.results_dir}")  # fmt: skip
    tested: list[tuple[Commit, Measured, Verdict | None]] = []
    with held_place(opt) as env:
        b = Bisection(source, run_args, opt.results_dir, env)
        try:
            g = b.measure(good, "good end")
            bad = b.measure(commits[-1], "bad end")
        except Unbuildable as exc:
            raise BisectError(f"an end of the bisection does not build: {exc}", USAGE) from None
        tested += [(good, g, None), (commits[-1], bad, None)]
        if not ends_apart(g.sample, bad.sample):
            t = welch_t(g.sample, bad.sample)
            raise BisectError(
                f"the ends do not differ: good {g.sample.text(g.unit)}, bad {bad.sample.text(bad.unit)} "
                f"(t {t:.1f}): nothing to bisect on this case",
                NOT_FOUND,
            )
        ends_builds = b.builds
        lo, hi, skipped = -1, len(commits) - 1, set[int]()
        while hi - lo > 1:
            open_ = [i for i in range(lo + 1, hi) if i not in skipped]
            if not open_:
                left = ", ".join(c.short for c in commits[lo + 1 : hi + 1])
                raise BisectError(f"the first bad commit is one of {left} (the others do not build)", NOT_FOUND)
            mid = min(open_, key=lambda i: abs(i - (lo + hi) / 2))
            c = commits[mid]
            try:
                m = b.measure(c, f"[{mid + 1}/{len(commits)}]")
            except Unbuildable as exc:
                print(f"  {c.short}  skipped: its firmware does not build: {exc}")
                skipped.add(mid)
                continue
            v = classify(m.sample, g.sample, bad.sample)
            if v.kind == "unclear":
                m = b.measure(c, "again", repeat_more=True)
                v = classify(m.sample, g.sample, bad.sample)
            tested.append((c, m, v))
            print(f"             {v.text()}")
            if v.kind == "unclear":
                raise BisectError(f"{c.short} cannot be told from either end: {m.sample.text(m.unit)} between good "
                                  f"{g.sample.text(g.unit)} and bad {bad.sample.text(bad.unit)}; raise --repeat",
                                  NOT_FOUND)  # fmt: skip
            lo, hi = (mid, hi) if v.kind == "good" else (lo, mid)
        first = commits[hi]
        print(f"\nbisect: the commits measured ({bad.case}, median and spread of {opt.repeat}+ repetitions):")
        for c, m, v in tested:
            print(_line(c, m, v))
        fm = b.by_tree[first.tree]
        print(f"\nfirst bad commit: {first.sha} {first.subject!r}\n  {fm.sample.text(fm.unit)}; good end "
              f"{g.sample.text(g.unit)}, bad end {bad.sample.text(bad.unit)}\n  builds: {b.builds - ends_builds} "
              f"in the bisection after the ends' {ends_builds} ({b.builds} in all; "
              f"{len(commits)} commits in question)")  # fmt: skip
    return ExitCode.PASSED


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # the same clean end as Ctrl-C: runs interrupted, worktrees removed


def main(argv: list[str] | None = None) -> int:
    before = {s: signal.signal(s, _terminate) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return bisect(parse(sys.argv[1:] if argv is None else argv))
    except BisectError as exc:
        print(f"bisect: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("bisect: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except Exception as exc:
        print(f"bisect: SUITE ERROR (a bug of the suite, not the DUT's): {type(exc).__name__}: {exc}", file=sys.stderr)
        traceback.print_exc()
        return ExitCode.SUITE_ERROR
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


if __name__ == "__main__":
    sys.exit(main())
