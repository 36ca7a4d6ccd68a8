"""`./suite bisect --from-history CASE`: the good and bad ends of a bisection taken from a bench's
history (``<results>/history/metrics.jsonl``, hil.report.history): the history gate's newest
regression of the case (hil.report.trends), the build of the last run before it began (good) and of
the run it began with (bad), each named by the commit its firmware says it was built from
(hil.dut.build_identity.commit_of)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hil.bisect.commits import BisectError
from hil.dut.build_identity import commit_of
from hil.exit_codes import ExitCode
from hil.report.history import MetricsHistory, RunNumbers
from hil.report.trends import Trend, trends


@dataclass(frozen=True)
class HistoryEnds:
    good: str  # commit
    bad: str
    trend: Trend

    def describe(self) -> str:
        return f"from the history: {self.trend.line()}"


def _commit(run: RunNumbers, role: str) -> str:
    version = run.firmware.get("version", "")
    sha = commit_of(version)
    if sha is None:
        why = f"its firmware says version {version!r}" if version else "the history has no firmware version for it"
        raise BisectError(f"the {role} run {run.run}: no commit to build ({why}); give --good/--bad",
                          ExitCode.USAGE_ERROR)  # fmt: skip
    return sha


def ends_from_history(path: Path, case: str) -> HistoryEnds:
    """The newest regression of `case` (scenario/case, or scenario/case/metric) in the history:
    its good and bad commits. A usage error when the history has no such regression."""
    if not path.is_file():
        raise BisectError(f"--history {path}: no such file (a CI job's results folder keeps history/metrics.jsonl)",
                          ExitCode.USAGE_ERROR)  # fmt: skip
    runs = MetricsHistory(path).runs()
    found: list[Trend] = []
    for dut, profile in dict.fromkeys((r.dut, r.profile) for r in runs):
        found += [t for t in trends(runs, dut, profile) if t.key == case or t.key.rsplit("/", 1)[0] == case]
    regressed = [t for t in found if t.verdict == "regression" and t.since]
    if not regressed:
        said = "; ".join(t.line() for t in found) or "no series of that case"
        raise BisectError(f"--from-history {case}: no regression of it in {path} ({said})", ExitCode.USAGE_ERROR)
    trend = max(regressed, key=lambda t: t.since or 0)
    assert trend.since is not None
    by_id = {r.run: r for r in runs}
    good, bad = by_id[trend.runs[trend.since - 1]], by_id[trend.runs[trend.since]]
    return HistoryEnds(_commit(good, "good (last before the change)"), _commit(bad, "bad (first of the change)"), trend)
