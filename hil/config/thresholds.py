"""Threshold profiles: per scenario and case, the limits a measurement must meet.

profile: virtual-100m
link_mbit: 100
scenarios:
  baseline:
    tcp-dut_tx: {min_mbps: 93, min_efficiency_pct: 98}
    udp-dut_rx: {min_mbps: 90, max_loss_pct: 0.5}
trends:
  window_dut: {min_gain_pct: 20, max_drop_pct: 10}
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hil.config.errors import ConfigError, load_model
from hil.paths import PROJECT_ROOT

THRESHOLDS_DIR = PROJECT_ROOT / "thresholds"


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    min_mbps: Annotated[float, Field(ge=0)] | None = None
    max_loss_pct: Annotated[float, Field(ge=0, le=100)] | None = None
    max_latency_ms: Annotated[float, Field(gt=0)] | None = None
    min_efficiency_pct: Annotated[float, Field(gt=0, le=100)] | None = None
    # an upper bound against an expected value computed by construction (e.g. a window-limited
    # rate): a measurement far above what the construction allows means the construction failed
    max_efficiency_pct: Annotated[float, Field(ge=100)] | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Limits:
        if all(v is None for v in self.model_dump().values()):
            raise ValueError(
                "no limit given (min_mbps, max_loss_pct, max_latency_ms, min_efficiency_pct, max_efficiency_pct)"
            )
        return self


class Trend(BaseModel):
    """The shape a ladder's medians must have, in ladder order (e.g. rising TCP_WND): the best
    later step gains at least `min_gain_pct` over the first, and no step falls more than
    `max_drop_pct` below the best step before it (a plateau within noise is fine). A negative
    `min_gain_pct` lets the best later step stay that much below the first: for a ladder that
    starts at the platform's ceiling (e.g. an emulated CPU), where only a collapse is a fault."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_gain_pct: Annotated[float, Field(ge=-50)]
    max_drop_pct: Annotated[float, Field(ge=0, lt=100)]


class ThresholdProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    profile: str
    link_mbit: Annotated[float, Field(gt=0)] | None = None
    scenarios: dict[str, dict[str, Limits]]
    trends: dict[str, Trend] = {}

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
        """The limits of a case, else the scenario's `default` entry; a case without limits is an
        error, never a pass."""
        cases = self.scenarios.get(scenario, {})
        found = cases.get(case) or cases.get("default")
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
