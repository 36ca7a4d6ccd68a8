"""Threshold profiles: per scenario and case, the limits a measurement must meet.

profile: virtual-100m
link_mbit: 100
scenarios:
  baseline:
    tcp-dut_tx: {min_mbps: 93, min_efficiency_pct: 98}
    udp-dut_rx: {min_mbps: 90, max_loss_pct: 0.5}
trends:
  window_dut: {min_gain_pct: 20, max_drop_pct: 10}
regression:          # the --baseline gate's tolerance per scenario (`default` for the others)
  default: {floor_pct: 3, k_sd: 2}
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hil.config.errors import ConfigError, load_model
from hil.paths import PROJECT_ROOT

THRESHOLDS_DIR = PROJECT_ROOT / "thresholds"


_LIMIT_KEY = re.compile(r"^(min|max)_([a-z][a-z0-9_]*)$")


# the directions a case name carries as one of its dash-separated parts (hil.directions): a
# threshold entry named after one covers every case of its scenario that goes that way
CASE_DIRECTIONS = ("dut_tx", "dut_rx", "uplink", "downlink")


class Limits(BaseModel):
    """A case's limits: `min_<metric>` / `max_<metric>` for any metric the case records
    (CaseRecord.metrics: mbps, efficiency_pct, loss_pct, jitter_ms, latency_ms, p99_ms, late,
    outoforder, ...). The common ones are declared here with their ranges; any other
    `min_`/`max_` key is taken as it is, so a new metric needs no code here or in the checker. A
    limit on a metric the case does not measure is a violation, never a pass."""

    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False)

    min_mbps: Annotated[float, Field(ge=0)] | None = None
    max_loss_pct: Annotated[float, Field(ge=0, le=100)] | None = None
    max_latency_ms: Annotated[float, Field(gt=0)] | None = None
    min_efficiency_pct: Annotated[float, Field(gt=0, le=100)] | None = None
    # an upper bound against an expected value computed by construction (e.g. a window-limited
    # rate): a measurement far above what the construction allows means the construction failed
    max_efficiency_pct: Annotated[float, Field(ge=100)] | None = None
    # a case measured for the record only, said so with the reason: "no criterion" in its title
    # and the summary (a case without limits and without this is an error, never a silent pass)
    no_criterion: Annotated[str, Field(min_length=3)] | None = None
    # why a floor sits below 90 % of its case's theoretical or expected value: the physics of the
    # construction (a queue, a window, a protocol's dynamics), never the bench PC's speed
    # (hil.scenarios.floors lists every such floor with it)
    physics: Annotated[str, Field(min_length=20)] | None = None

    @model_validator(mode="after")
    def _keys_and_not_empty(self) -> Limits:
        for key, value in (self.model_extra or {}).items():
            if not _LIMIT_KEY.match(key):
                raise ValueError(f"{key}: Extra inputs are not permitted (a limit is min_<metric> or max_<metric>)")
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{key}: a limit must be a finite number (got {value!r})")
            if value < 0:  # every metric the suite records is a rate, a share, a time or a count
                raise ValueError(f"{key}: a limit cannot be negative (got {value!r}): no metric measures below 0")
        bounds = {(bound, metric): value for bound, metric, value in self.bounds()}
        for (bound, metric), low in bounds.items():
            high = bounds.get(("max", metric))
            if bound == "min" and high is not None and low > high:
                raise ValueError(f"min_{metric} {low:g} is above max_{metric} {high:g}: no measurement can meet both")
        if self.no_criterion is not None and self.bounds():
            raise ValueError("no_criterion and limits exclude each other: give one or the other")
        if not self.bounds() and self.no_criterion is None:
            raise ValueError(
                "no limit given (min_<metric> or max_<metric>, e.g. min_mbps, max_loss_pct; or "
                "no_criterion: <why the case is measured for the record only>)"
            )
        return self

    def bounds(self) -> list[tuple[str, str, float]]:
        """(min|max, metric, value) for every limit set."""
        out = []
        for key, value in self.model_dump().items():
            m = _LIMIT_KEY.match(key)
            if m and value is not None:
                out.append((m.group(1), m.group(2), float(value)))
        return out


class Trend(BaseModel):
    """The shape a ladder's medians must have, in ladder order (e.g. rising TCP_WND): the best
    later step gains at least `min_gain_pct` over the first, and no step falls more than
    `max_drop_pct` below the best step before it (a plateau within noise is fine). A negative
    `min_gain_pct` lets the best later step stay that much below the first: for a ladder that
    starts at the platform's ceiling (e.g. an emulated CPU), where only a collapse is a fault."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    min_gain_pct: Annotated[float, Field(ge=-50)]
    max_drop_pct: Annotated[float, Field(ge=0, lt=100)]


class RegressionTolerance(BaseModel):
    """How much worse than the baseline a case's median may be before it is a regression:
    `floor_pct` % of the baseline's median + `floor_abs` (in the metric's unit) + `k_sd` times the
    two runs' combined standard deviation over their repetitions. `metrics`: what is compared
    (default: the case's own number: mbps, median_ms, or loss_pct for stream cases)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    floor_pct: Annotated[float, Field(ge=0, le=100)] = 0.0
    floor_abs: Annotated[float, Field(ge=0)] = 0.0
    k_sd: Annotated[float, Field(ge=0, le=10)] = 0.0
    metrics: list[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]] | None = None

    @model_validator(mode="after")
    def _some_tolerance(self) -> RegressionTolerance:
        if self.floor_pct == 0 and self.floor_abs == 0:
            raise ValueError(
                "floor_pct or floor_abs must be above 0 (a tolerance of k standard deviations alone "
                "fails every run whose repetitions happened to agree)"
            )
        return self

    def describe(self) -> str:
        parts = [f"{self.floor_pct:g} % of the baseline"] if self.floor_pct else []
        parts += [f"{self.floor_abs:g} absolute"] if self.floor_abs else []
        parts += [f"{self.k_sd:g} x sd"] if self.k_sd else []
        return " + ".join(parts)


class ThresholdProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    profile: str
    link_mbit: Annotated[float, Field(gt=0)] | None = None
    scenarios: dict[str, dict[str, Limits]]
    trends: dict[str, Trend] = {}
    regression: dict[str, RegressionTolerance] = {}

    def tolerance(self, scenario: str) -> RegressionTolerance:
        """The regression tolerance of a scenario, else the `default` entry; none is an error when
        a baseline is given, never a pass."""
        found = self.regression.get(scenario) or self.regression.get("default")
        if found is None:
            raise ConfigError(
                f"threshold profile {self.profile!r} has no `regression: {scenario}:` or `regression: default:` "
                "entry (floor_pct, floor_abs, k_sd): the baseline gate needs a tolerance"
            )
        return found

    def trend(self, scenario: str) -> Trend:
        """The trend a ladder scenario must show; a ladder without one is an error, never a pass."""
        found = self.trends.get(scenario)
        if found is None:
            raise ConfigError(
                f"threshold profile {self.profile!r} has no `trends: {scenario}:` entry "
                "(min_gain_pct, max_drop_pct): the ladder's trend needs a limit"
            )
        return found

    def limits(self, scenario: str, case: str) -> Limits:
        """The limits of a case, else its direction's entry (`dut_tx`, `dut_rx`, `uplink`,
        `downlink`: every case of the scenario that goes that way, e.g. `dut_tx-w8K` and
        `tcp-dut_tx`), else the scenario's `default` entry; a case without limits is an error,
        never a pass."""
        cases = self.scenarios.get(scenario, {})
        direction = next((d for d in CASE_DIRECTIONS if d in case.split("-")), None)
        found = cases.get(case) or (cases.get(direction) if direction else None) or cases.get("default")
        if found is None:
            raise ConfigError(
                f"threshold profile {self.profile!r} has no limits for {scenario}/{case}: "
                "every measured case needs a threshold"
            )
        return found


def profile_path(name: str) -> Path:
    return THRESHOLDS_DIR / f"{name}.yaml"


def load_thresholds(path: Path) -> ThresholdProfile:
    return load_model(path, ThresholdProfile, "a mapping with `profile` and `scenarios`")
