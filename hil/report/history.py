"""Every run's numbers, kept across runs (``<results>/history/metrics.jsonl``, one line per
run), so a run's summary can show the change since an earlier run of the same DUT and profile:
the previous one, or one named by its run id (a baseline)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from hil.config.errors import ConfigError


@dataclass(frozen=True)
class RunNumbers:
    run: str
    time: str
    dut: str
    profile: str
    values: dict[str, float]  # "scenario/case/metric" -> value


class MetricsHistory:
    def __init__(self, path: Path) -> None:
        self.path = path

    def runs(self) -> list[RunNumbers]:
        """The runs on file, oldest first; a damaged line (a run killed while writing) is skipped."""
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text().splitlines():
            try:
                d = json.loads(line)
                out.append(RunNumbers(d["run"], d["time"], d["dut"], d["profile"], dict(d["values"])))
            except (ValueError, KeyError, TypeError):
                continue
        return out

    def compare_with(self, current: RunNumbers, named: str | None = None) -> RunNumbers | None:
        """The run to compare `current` with: the one named (an error if there is none of that
        id), else the latest earlier run of the same DUT and profile."""
        runs = [r for r in self.runs() if r.run != current.run]
        if named is not None:
            found = next((r for r in runs if r.run == named), None)
            if found is None:
                known = ", ".join(r.run for r in runs[-5:]) or "none"
                raise ConfigError(f"--compare-run {named}: no such run in {self.path} (latest: {known})")
            return found
        same = [r for r in runs if r.dut == current.dut and r.profile == current.profile]
        return same[-1] if same else None

    def add(self, numbers: RunNumbers) -> None:
        """Adds (or replaces) the run's line."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept = [r for r in self.runs() if r.run != numbers.run]
        lines = [json.dumps(r.__dict__) for r in [*kept, numbers]]
        self.path.write_text("\n".join(lines) + "\n")
