"""What each scenario records: the shape of its case ids and the metrics of its records. A
threshold profile is checked against it before any bench comes up (`check_thresholds`), so a
misspelt metric (`min_mbsp`), scenario or case key is a configuration error naming the file and
the key, never a DUT failure found after the traffic ran.

A scenario's records carry the metrics of their kind (CaseRecord.metrics): a throughput case its
median (`mbps`), spread, efficiency, UDP loss and jitter, and what its generator adds (iperf 3:
retransmits, congestion window, RTT, CPU); a latency case its times and loss; a stream case its
counts. A family declares its scenarios' shapes (hil.scenarios.contract.Family.shapes): a new
scenario or metric is an entry of its family's `shapes`.
"""

from __future__ import annotations

from pathlib import Path

from hil.config.errors import ConfigError
from hil.config.thresholds import Limits, ThresholdProfile
from hil.scenarios.contract import default_limits, families
from hil.scenarios.metrics import ScenarioShape


def scenarios() -> tuple[ScenarioShape, ...]:
    """Every registered family's scenarios."""
    return tuple(shape for fam in families() for shape in fam.shapes)


def ladders() -> tuple[str, ...]:
    """The scenarios a `trends:` entry can shape (a ladder of builds)."""
    return tuple(s.name for s in scenarios() if s.trend)


def shape_of(scenario: str) -> ScenarioShape | None:
    return next((s for s in scenarios() if s.matches(scenario)), None)


def _known() -> str:
    return ", ".join(s.name if not s.pattern else "stress-<profile>" for s in scenarios())


def check_thresholds(profile: ThresholdProfile, path: Path) -> None:
    """Every scenario, case and limit of a threshold profile against what the scenarios record:
    one ConfigError naming the file, the key and the problem (the first one found)."""
    for scenario, cases in profile.scenarios.items():
        shape = shape_of(scenario)
        if shape is None:
            raise ConfigError(f"{path}: scenarios.{scenario}: unknown scenario (one of {_known()})")
        for case, limits in cases.items():
            where = f"{path}: scenarios.{scenario}.{case}"
            if not shape.case_ok(case):
                raise ConfigError(
                    f"{where}: no case of {scenario} is called {case!r} (its cases read like {shape.example!r}, "
                    "or `default` for every case without an entry of its own)"
                )
            for bound, metric, _ in limits.bounds():
                if metric not in shape.metrics:
                    raise ConfigError(
                        f"{where}.{bound}_{metric}: {scenario} records no metric {metric!r} "
                        f"(it records: {', '.join(sorted(shape.metrics))})"
                    )
    for scenario in profile.trends:
        if scenario not in ladders():
            raise ConfigError(f"{path}: trends.{scenario}: only a ladder has a trend (one of {', '.join(ladders())})")
    every = frozenset().union(*(s.metrics for s in scenarios()))
    for scenario, tolerance in profile.regression.items():
        shape = shape_of(scenario)
        if scenario != "default" and shape is None:
            raise ConfigError(f"{path}: regression.{scenario}: unknown scenario (one of default, {_known()})")
        recorded = shape.metrics if shape is not None else every
        for metric in tolerance.metrics or ():
            if metric not in recorded:
                raise ConfigError(
                    f"{path}: regression.{scenario}.metrics: {metric!r} is recorded by no case of {scenario} "
                    f"(one of {', '.join(sorted(recorded))})"
                )


def with_family_defaults(profile: ThresholdProfile) -> ThresholdProfile:
    """The profile with each family's default limits (hil.scenarios.contract.Family.default_limits)
    under every scenario the file does not name: a family's defaults live once, in its definition,
    and a bench's threshold file only overrides them (a scenario it names is taken as it is)."""
    missing = {s: cases for s, cases in default_limits().items() if s not in profile.scenarios}
    if not missing:
        return profile
    added = {s: {case: Limits.model_validate(bounds) for case, bounds in cases.items()} for s, cases in missing.items()}
    return profile.model_copy(update={"scenarios": {**profile.scenarios, **added}})
