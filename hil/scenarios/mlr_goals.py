"""RFC 9971 (MLRsearch) search goals and the two parts of it that are normative: how the trials
measured at one load classify it for a goal (a lower bound, an upper bound or undecided), and the
goal's results from those classes - the relevant lower and upper bounds and the conditional
throughput. The load selection that produces the trials is the controller's
(hil/scenarios/mlrsearch.py); these rules are the RFC's, so any controller's results compare.

Terms (RFC 9971 section 4): a trial is *high-loss* for a goal when its loss ratio is above the
goal's loss ratio (equal counts as low-loss), *short* when its duration is below the goal's final
trial duration. Durations summed are the trials' effective durations (here their traffic time).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum


class Bound(Enum):
    LOWER = "lower bound"
    UPPER = "upper bound"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class SearchGoal:
    """RFC 9971's search goal: `loss_ratio` and `exceed_ratio` as fractions (0.005 = 0.5 %),
    `width` relative to the upper bound (0.005: the relevant bounds within 0.5 %), durations in
    seconds; `initial_trial_s` the shortest trial the controller uses for it (None: the final)."""

    name: str
    loss_ratio: float
    final_trial_s: float
    duration_sum_s: float
    exceed_ratio: float
    width: float
    initial_trial_s: float | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.loss_ratio < 1 or not 0 <= self.exceed_ratio < 1:
            raise ValueError(f"goal {self.name}: loss and exceed ratios are fractions in [0, 1)")
        if self.final_trial_s <= 0 or self.duration_sum_s <= 0 or self.width <= 0:
            raise ValueError(f"goal {self.name}: durations and width must be positive")
        if self.initial_trial_s is not None and not 0 < self.initial_trial_s <= self.final_trial_s:
            raise ValueError(f"goal {self.name}: the initial trial duration is positive and at most the final one")

    @property
    def shortest_s(self) -> float:
        return self.final_trial_s if self.initial_trial_s is None else self.initial_trial_s

    def attributes(self) -> str:
        """Every attribute, as the RFC asks a report to state them."""
        return (
            f"{self.name}: loss ratio {100 * self.loss_ratio:g} %, exceed ratio {100 * self.exceed_ratio:g} %, "
            f"final trial {self.final_trial_s:g} s, duration sum {self.duration_sum_s:g} s, initial trial "
            f"{self.shortest_s:g} s, width {100 * self.width:g} % of the upper bound"
        )


@dataclass(frozen=True)
class Measurement:
    """One trial at `load_mbps` (intended) for `duration_s`: what the generator sent, what the
    receiver got (the forwarding rate) and the loss ratio (a fraction); a generator that fell
    short of the load is marked (its trial says nothing about the path at that load)."""

    load_mbps: float
    duration_s: float
    sent_mbps: float
    forwarding_mbps: float
    loss_ratio: float
    generator_limited: bool = False
    # a trial that vouches only for a lower load than intended (a loss-free trial whose generator
    # the host stalled: what it did send); the search counts it there
    counts_at_mbps: float | None = None


def classify(trials: Iterable[Measurement], goal: SearchGoal) -> Bound:
    """RFC 9971's load classification (its appendix's code) of one load from every trial at it."""
    fll = flh = sl = sh = 0.0
    for t in trials:
        high = t.loss_ratio > goal.loss_ratio
        if t.duration_s >= goal.final_trial_s:
            fll, flh = (fll, flh + t.duration_s) if high else (fll + t.duration_s, flh)
        else:
            sl, sh = (sl, sh + t.duration_s) if high else (sl + t.duration_s, sh)
    exceed_coefficient = goal.exceed_ratio / (1.0 - goal.exceed_ratio)
    balancing_s = sl * exceed_coefficient
    positive_excess_s = max(0.0, sh - balancing_s)
    effect_high_loss_s = flh + positive_excess_s
    effect_full_length_s = fll + effect_high_loss_s
    effect_whole_s = max(effect_full_length_s, goal.duration_sum_s)
    quantile_duration_s = effect_whole_s * goal.exceed_ratio
    pessimistic_is_lower = effect_whole_s - fll <= quantile_duration_s
    optimistic_is_lower = effect_high_loss_s <= quantile_duration_s
    if pessimistic_is_lower and optimistic_is_lower:
        return Bound.LOWER
    if not optimistic_is_lower:
        return Bound.UPPER
    return Bound.UNDECIDED


def relevant_bounds(
    by_load: Mapping[float, Sequence[Measurement]], goal: SearchGoal
) -> tuple[float | None, float | None]:
    """The relevant lower and upper bounds: the smallest load classified as an upper bound, and
    the largest lower bound below it (a lower bound above an upper bound is taken as a fluke)."""
    lower: float | None = None
    for load in sorted(by_load):
        bound = classify(by_load[load], goal)
        if bound is Bound.UPPER:
            return lower, load
        if bound is Bound.LOWER:
            lower = load
    return lower, None


def conditional_throughput(load_mbps: float, trials: Sequence[Measurement], goal: SearchGoal) -> float | None:
    """RFC 9971's conditional throughput at a load (its appendix's code): the load times one minus
    the duration-weighted (1 - exceed ratio) quantile of the full-length trials' loss ratios.
    None without a full-length trial."""
    full = sorted((t for t in trials if t.duration_s >= goal.final_trial_s), key=lambda t: t.loss_ratio)
    if not full:
        return None
    whole_s = max(goal.duration_sum_s, sum(t.duration_s for t in full))
    remaining = whole_s * (1.0 - goal.exceed_ratio)
    quantile: float | None = None
    for t in full:
        if quantile is None or remaining > 0.0:
            quantile = t.loss_ratio
            remaining -= t.duration_s
        else:
            break
    else:
        if remaining > 0.0:
            quantile = 1.0
    assert quantile is not None
    return load_mbps * (1.0 - quantile)
