"""One search for several loss ratios at once, as RFC 9971 (MLRsearch) describes it: typically the
no-drop rate (NDR, loss ratio 0) and a partial-drop rate (PDR, 0.5 %), each from a search goal
(hil/scenarios/mlr_goals.py: the goal's attributes, the RFC's load classification, relevant
bounds and conditional throughput). Every trial counts for every goal.

Which load comes next is the controller's choice (the RFC leaves it open); this one narrows with
what every trial measured, as the suite's single-target search did:

* Each goal nominates one load; the lowest nomination is measured (smaller loads first, as the
  RFC recommends), the longer duration on a tie.
* A goal whose relevant bounds are within its width (relative to the upper bound), whose max load
  is a lower bound, or whose min load is an upper bound, nominates nothing.
* An undecided load between a goal's bounds (a goal with an exceed ratio above 0 needs more than
  one trial at a load) is measured again at the final trial duration.
* Where the goal's loss ratio should be met: the lost rate `sent x loss` grows about linearly
  above a path's capacity (slope 1 for a hard rate limit, less for a small buffer that drops part
  of each burst). The line through the lowest high-loss trial and the highest one that lost more
  (or slope 1 with one) gives an estimate `e`; the goal nominates `e` less half its width, and
  once a lower bound sits there, one width above it (the upper bound that closes the interval;
  should that be a lower bound too, four widths above it, then sixteen, then it bisects).
  An estimate that fails in a row widens the step below it fourfold (unless the next estimate
  moved well below the failed one: a line through two trials instead of one's slope 1). Without a usable estimate
  the goal bisects (geometrically), or with no lower bound yet searches down from its upper
  bound in steps that grow fourfold.
* Trials run at a goal's initial trial duration until it has a lower bound, at its final
  duration from then on; short trials can only make upper bounds (the RFC's classification).
* The generator: a trial whose generator fell short of the load is repeated once; if it falls
  short again and the path lost no more than the smallest goal loss ratio of what was sent, the
  search stops as generator-limited (the tester's ceiling, not the DUT's); if the path lost more,
  the trial counts at the rate it did send. With `count_short_lossy` (a generator whose shortfall
  is gaps, never catch-up bursts), a short trial that lost more than any goal allows counts at
  once, and places estimates like any other. A trial may vouch for less than its load
  (`Measurement.counts_at_mbps`: a loss-free trial the host stalled the generator in); it counts
  there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hil.scenarios.mlr_goals import (
    Bound,
    Measurement,
    SearchGoal,
    classify,
    conditional_throughput,
    relevant_bounds,
)

STEPS_UP = 3  # steps above the estimate (1, 4, 16 widths) before the search bisects instead
RESERVED_TRIALS = 3  # the last trials of a search that is running out go to its gated goal
LOAD_DIGITS = 4
# a lost rate that grows by less than 1 % of the added load (the emulated board's FIFO losing a few
# datagrams at any load) places no estimate: the search bisects
MIN_SLOPE = 0.01  # loads in Mbit/s to 0.1 kbit/s: a load measured twice is the same key
NDR = "NDR"
PDR = "PDR"


@dataclass
class GoalResult:
    """A goal's relevant bounds and conditional throughput (Mbit/s), and whether they form a
    regular result (both bounds, within the goal's width) or why not."""

    goal: SearchGoal
    lower_mbps: float | None
    upper_mbps: float | None
    conditional_mbps: float | None
    status: str  # "regular" | "max load is a lower bound" | "no lower bound" | "width not met" | "generator-limited"

    @property
    def regular(self) -> bool:
        return self.status == "regular"

    @property
    def relative_width(self) -> float | None:
        if self.lower_mbps is None or self.upper_mbps is None:
            return None
        return (self.upper_mbps - self.lower_mbps) / self.upper_mbps


@dataclass
class MlrResult:
    """The goals' results and every trial in order; `counted_at[i]` is the load trial i counts at
    (its intended load; the rate the generator did send when it fell short and the path lost more
    than any goal allows even there; None for a trial the generator's repeat replaced)."""

    goals: list[GoalResult]
    trials: list[Measurement] = field(default_factory=list)
    counted_at: list[float | None] = field(default_factory=list)
    generator_limited: bool = False
    max_mbps: float = 0.0

    def counted(self) -> list[tuple[float, Measurement]]:
        """(load, trial) of every trial that counts, in order."""
        return [(load, t) for load, t in zip(self.counted_at, self.trials, strict=True) if load is not None]

    @property
    def total_trial_s(self) -> float:
        return sum(t.duration_s for t in self.trials)

    def goal(self, name: str) -> GoalResult:
        return next(g for g in self.goals if g.goal.name == name)

    def result_lines(self, unit: str) -> list[str]:
        """One line per goal: its relevant bounds, conditional throughput (in `unit`) and status."""
        fmt = lambda v: "none" if v is None else f"{v:.3f}"  # noqa: E731
        return [
            f"{g.goal.name}: relevant lower bound {fmt(g.lower_mbps)}, upper bound {fmt(g.upper_mbps)}, conditional "
            f"throughput {fmt(g.conditional_mbps)} {unit} ({g.status})"
            for g in self.goals
        ]

    def bound_metrics(self) -> dict[str, float]:
        """Each goal's relevant bounds and conditional throughput as a record's metrics:
        `ndr_mbps`, `ndr_upper_mbps`, `ndr_ct_mbps`, `pdr_mbps`, ... (where found)."""
        out = {}
        for g in self.goals:
            key = g.goal.name.lower()
            for what, value in (("mbps", g.lower_mbps), ("upper_mbps", g.upper_mbps), ("ct_mbps", g.conditional_mbps)):
                if value is not None:
                    out[f"{key}_{what}"] = round(value, 4)
        return out

    def search_fields(self) -> dict[str, object]:
        """What a record says of the search: its trials and their time, each goal's attributes
        and result."""
        return {
            "trials": len(self.trials),
            "trial_s": round(self.total_trial_s, 3),
            "goals": {g.goal.name: g.goal.attributes() for g in self.goals},
            "results": {
                g.goal.name: {"status": g.status, "lower_mbps": g.lower_mbps, "upper_mbps": g.upper_mbps,
                              "conditional_mbps": g.conditional_mbps}
                for g in self.goals
            },
        }  # fmt: skip


@dataclass
class _Goal:
    """A goal's search state: estimates that failed in a row, steps down without a lower bound."""

    goal: SearchGoal
    misses: int = 0
    steps_down: int = 0
    steps_up: int = 0  # "above" loads that turned out lower bounds in a row: the next step is 4x wider
    trust: bool = True  # estimates from the lost rate (off once one proved too low)
    failed_probe: float | None = None  # the last estimate's load that turned out an upper bound


def mlr_search(
    trial: Callable[[float, float], Measurement],
    goals: Sequence[SearchGoal],
    max_mbps: float,
    min_mbps: float | None = None,
    max_trials: int = 12,
    generator_retries: int = 1,
    gated: str | None = None,
    after_gated_trials: int | None = None,
    count_short_lossy: bool = False,
) -> MlrResult:
    """`trial(load_mbps, duration_s)` measures one trial. The first trial offers `max_mbps` (the
    medium's theoretical rate for the frame size); `min_mbps` (default 0.1 % of it) is the lowest
    load tried. Ends when no goal nominates a load or after `max_trials` trials; the last
    `RESERVED_TRIALS` go to the `gated` goal while it still nominates (the one a threshold checks);
    once it is done, the others get trials up to `after_gated_trials` in all (None: up to
    `max_trials`), so that a goal a threshold does not check cannot stretch a run (a loss that
    does not depend on the load leaves a no-drop rate no lower bound). `count_short_lossy`: a
    trial whose generator fell short and whose path lost more than any goal allows counts at once
    at the rate it sent, and places estimates (a generator that falls short by leaving gaps, never
    by bursting to catch up: the frame tester's)."""
    if not goals:
        raise ValueError("a search needs at least one goal")
    if max_mbps <= 0 or max_trials < 1:
        raise ValueError("the max load must be positive and at least one trial allowed")
    floor = min_mbps if min_mbps is not None else max_mbps / 1000
    by_load: dict[float, list[Measurement]] = {}
    result = MlrResult([], max_mbps=max_mbps)
    states = [_Goal(g) for g in goals]
    smallest_loss = min(g.loss_ratio for g in goals)
    largest_loss = max(g.loss_ratio for g in goals)

    def measure(load: float, duration: float) -> bool:
        """One trial and its generator repeats; False when the search must stop."""
        t: Measurement | None = None
        for _ in range(generator_retries + 1):
            if len(result.trials) >= max_trials:
                return False
            t = trial(load, duration)
            result.trials.append(t)
            result.counted_at.append(None)
            if not t.generator_limited or (count_short_lossy and t.loss_ratio > largest_loss):
                break
        assert t is not None
        if t.generator_limited:
            if t.loss_ratio <= smallest_loss:
                result.generator_limited = True
                return False
            load = min(load, t.sent_mbps)  # the path lost more than any goal allows at what was sent
        if t.counts_at_mbps is not None:
            load = min(load, t.counts_at_mbps)
        key = round(load, LOAD_DIGITS)
        by_load.setdefault(key, []).append(t)
        result.counted_at[-1] = key
        return True

    if not measure(round(max_mbps, LOAD_DIGITS), max(g.shortest_s for g in goals)):
        return _finish(result, by_load, goals, max_mbps)
    while len(result.trials) < max_trials:
        nominations = [
            n for s in states if (n := _nominate(s, by_load, max_mbps, floor, count_short_lossy)) is not None
        ]
        if not nominations:
            break
        gated_done = gated is not None and all(n[2].goal.name != gated for n in nominations)
        if gated_done and after_gated_trials is not None and len(result.trials) >= after_gated_trials:
            break
        if max_trials - len(result.trials) <= RESERVED_TRIALS:
            nominations = [n for n in nominations if n[2].goal.name == gated] or nominations
        load, duration, _, _ = min(nominations, key=lambda n: (n[0], -n[1]))
        chosen = [(n[2], n[3], relevant_bounds(by_load, n[2].goal)[0]) for n in nominations if n[0] == load]
        if not measure(load, duration):
            break
        for state, kind, lower_before in chosen:  # every goal that nominated this load learns from it
            bound = classify(by_load.get(load, []), state.goal)
            if kind == "estimate":
                state.misses = state.misses + 1 if bound is Bound.UPPER else 0
                state.failed_probe = load if bound is Bound.UPPER else None
            elif kind == "above" and bound is Bound.LOWER:
                # the estimate was a little low: step up again, four times wider; after
                # STEPS_UP such steps it was far too low: bisect from here on
                state.steps_up += 1
                state.trust = state.steps_up < STEPS_UP
            elif kind == "above":
                state.steps_up = 0
            if lower_before is None and bound is Bound.UPPER:
                state.steps_down += 1
    return _finish(result, by_load, goals, max_mbps)


def _nominate(
    s: _Goal, by_load: dict[float, list[Measurement]], max_mbps: float, floor: float, count_short_lossy: bool
) -> tuple[float, float, _Goal, str] | None:
    """The goal's next (load, duration, goal, why: "estimate", "above" or "other"), or None when
    it is done."""
    g = s.goal
    lo, hi = relevant_bounds(by_load, g)
    top = round(max_mbps, LOAD_DIGITS)
    if hi is None:
        if lo == top:
            return None  # the max load is a lower bound
        return (top, g.final_trial_s, s, "other")  # the max load again (undecided so far)
    if hi <= floor * (1 + 1e-9):
        return None  # the min load is an upper bound
    if lo is not None and (hi - lo) / hi <= g.width:
        return None
    undecided = [x for x in sorted(by_load) if (lo or 0) < x < hi and classify(by_load[x], g) is Bound.UNDECIDED]
    if undecided:
        return (undecided[0], g.final_trial_s, s, "other")
    duration = g.final_trial_s if lo is not None else g.shortest_s
    est = _estimate(by_load, g, count_short_lossy) if s.trust else None
    below_hi = hi * (1 - g.width / 2)
    if est is not None:
        # an estimate that moved well below the one that failed is a new estimate (two trials'
        # line instead of one's); one that did not is widened by the misses in a row
        moved = s.failed_probe is not None and est < s.failed_probe * (1 - 4 * g.width)
        probe = min(est, hi) * (1 - g.width / 2 * 4 ** (0 if moved else s.misses))
        if lo is not None and lo >= probe * (1 - g.width / 4):
            # the lower bound already sits at the estimate: the upper bound one width above it
            above = lo / (1 - min(0.5, 0.98 * g.width * 4**s.steps_up))
            if above < below_hi:
                return (_snap(above), duration, s, "above")
        elif (lo or floor) < probe < below_hi and not _near(probe, by_load, g.width / 4):
            return (_snap(probe), duration, s, "estimate")
    if lo is None:  # search down from the upper bound, in steps that grow
        probe = max(floor, hi * (1 - min(0.5, 4 * g.width * 4**s.steps_down)))
        return (_snap(probe), duration, s, "other")
    probe = math.sqrt(lo * hi)  # bisect, geometrically
    return (_snap(probe), duration, s, "other")


def _snap(load: float) -> float:
    return round(load, LOAD_DIGITS)


def _near(load: float, by_load: dict[float, list[Measurement]], rel: float) -> bool:
    return any(abs(load - x) <= rel * x for x in by_load)


def _estimate(by_load: dict[float, list[Measurement]], g: SearchGoal, count_short_lossy: bool) -> float | None:
    """Where the lost rate meets the goal's loss ratio, from the high-loss full-or-short trials:
    the line through the lowest one and the highest that lost more (slope 1 with one)."""
    pts = sorted(
        (t.sent_mbps, t.sent_mbps * t.loss_ratio)
        for trials in by_load.values()
        for t in trials
        if t.loss_ratio > g.loss_ratio and (count_short_lossy or not t.generator_limited)
    )
    if not pts:
        return None
    x1, e1 = pts[0]
    slope = 1.0
    for x2, e2 in reversed(pts[1:]):  # the widest pair: measured losses are noisy
        if x2 > x1 * 1.001 and e2 > e1:
            slope = min(1.0, (e2 - e1) / (x2 - x1))
            break
    else:
        if len(pts) > 1 and pts[-1][0] > x1 * 1.001:
            return None  # lost no more at higher loads: the losses say nothing of where they start
    if slope <= max(g.loss_ratio * 1.5, MIN_SLOPE):
        return None  # the loss hardly grows with the load: it says nothing of where it starts
    zero = x1 - e1 / slope  # where the lost rate would be nil
    return slope * zero / (slope - g.loss_ratio) if zero > 0 else None


def _finish(
    result: MlrResult,
    by_load: dict[float, list[Measurement]],
    goals: Sequence[SearchGoal],
    max_mbps: float,
) -> MlrResult:
    top = round(max_mbps, LOAD_DIGITS)
    for g in goals:
        lo, hi = relevant_bounds(by_load, g)
        ct = conditional_throughput(lo, by_load[lo], g) if lo is not None else None
        if result.generator_limited and hi is None:
            status = "generator-limited"
        elif lo is not None and hi is None and lo == top:
            status = "max load is a lower bound"
        elif lo is None:
            status = "no lower bound"
        elif hi is None or (hi - lo) / hi > g.width + 1e-12:
            status = "width not met"
        else:
            status = "regular"
        result.goals.append(GoalResult(g, lo, hi, ct, status))
    return result
