"""Loss-free UDP capacity search: the highest offered rate whose loss stays at or below a
target, found to a resolution relative to that rate (RFC 2544's binary search, narrowed with
what every trial measured, and FD.io MLRsearch's short trials first, full-length trials last).

How it narrows:

* Bounds. A trial that passed is a lower bound. A trial that failed is an upper bound, and so
  is its received rate: at the loss-free rate `r*` the path delivers `r* x (1 - target)`, and
  a path that is not overloaded into receiving *less* than that (no receive livelock) cannot
  have `r*` above `received / (1 - target)`. On a packet-rate or bit-rate limited path that
  one number puts the upper bound right at the capacity after the first trial.
* Where to try next. Above its capacity a path loses a part of the excess it is offered:
  lost rate `e(r) = sent x loss` grows about linearly with the offered rate (slope 1 for a hard
  rate limit, less for a small buffer that drops part of each burst). The line through the
  lowest failing trial and the highest one that lost more (the widest pair: measured losses are
  noisy; trials of the next trial's length only, when there are such), or with one failing trial
  slope 1, gives an estimate of where the loss meets the target; the next trial is just below
  that estimate (and below the upper bound), or, once a pass sits just below it, one
  goal-width above the pass. Each estimate that fails in a row widens the next step below the
  upper bound fourfold (0.25 %, 1 %, 4 %, 16 % ...: a path whose loss hardly changes with the
  rate is found in a few steps, not crawled down). Without a usable estimate (failing trials
  that lost no more at higher rates say nothing of where the loss starts), or once a pass
  one goal-width above an estimate showed it too low with the interval still wide, the search
  bisects.
* When to stop. When `hi - lo <= max(goal_pct % of lo, floor_mbps)`.
* Trial lengths. Trials are short (`short_trial_s`) while the search narrows, and full-length
  (`trial_s`) from the first confirmation on: a short trial that passes may owe it to the
  device's buffers, one that fails would fail for longer too.
* Confirmation. The answer is always a rate that passed a full-length trial, normally one
  after which the bounds were within the goal. When the goal is met by a short trial's lower bound, a
  full-length trial at that rate confirms it; when a full-length trial (after a failed
  confirmation) passes and meets the goal, it is that rate's confirmation. A confirmation that
  fails becomes an upper bound (with its received rate) and the search goes on below it.
  With two trials left of `max_trials` the search confirms the highest rate that passed even
  if the goal is not met (a path too noisy for it still gets a confirmed number; `goal_met`
  tells).
* Generator. Every trial checks the generator's achieved rate. A trial whose generator fell
  short is repeated once at the same rate and length (a busy host PC); if it falls short again
  and lost more than the target at the rate it did send, that rate is an upper bound (the path
  loses even there) and the search goes on; otherwise the search stops as "generator-limited"
  (a bench fault, no number) instead of producing a false number for the DUT.
* Counting. Every call of the trial function is a trial: repeats after a generator shortfall
  and confirmations count against `max_trials` like any other, and all stay in the trial log,
  each with its length and the bounds after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

GOAL_PCT = 0.5  # relative resolution: hi - lo <= 0.5 % of lo
FLOOR_MBPS = 0.01  # ... but never finer than this (a 10 kbit/s step)
SHORT_TRIAL_FRACTION = 0.2  # short trials last a fifth of a full-length one ...
MIN_SHORT_TRIAL_S = 0.5  # ... but at least this long (enough datagrams for 0.1 % loss)


@dataclass(frozen=True)
class Trial:
    """One trial as the trial function measured it; the search fills in the length it asked
    for and the bounds it held after the trial (lo 0: none yet)."""

    offered_mbps: float
    sent_mbps: float
    received_mbps: float
    loss_pct: float
    generator_limited: bool
    passed: bool
    duration_s: float = 0.0
    lo_mbps: float = 0.0
    hi_mbps: float = 0.0


@dataclass
class SearchResult:
    rate_mbps: float | None  # the confirmed loss-free rate (None: nothing could be confirmed)
    trials: list[Trial] = field(default_factory=list)
    generator_limited: bool = False
    confirmed: bool = False
    lo_mbps: float = 0.0  # the bounds at the end
    hi_mbps: float = 0.0

    @property
    def total_trial_s(self) -> float:
        return sum(t.duration_s for t in self.trials)


def short_trial_s(trial_s: float) -> float:
    return min(trial_s, max(MIN_SHORT_TRIAL_S, SHORT_TRIAL_FRACTION * trial_s))


def search(
    trial: Callable[[float, float], Trial],
    max_mbps: float,
    trial_s: float,
    loss_target_pct: float,
    goal_pct: float = GOAL_PCT,
    floor_mbps: float = FLOOR_MBPS,
    short_s: float | None = None,
    max_trials: int = 8,
    generator_retries: int = 1,
) -> SearchResult:
    """`trial(rate_mbps, duration_s)` runs one trial and judges it against `loss_target_pct`
    (the search only uses the target to bound the rate from a received rate). The first trial
    offers `max_mbps` (the link's theoretical goodput); a path that carries it is found in two
    trials (one short, one full-length confirmation). Returns the confirmed rate, or None when
    nothing could be confirmed within `max_trials` or the generator could not reach a rate."""
    if max_mbps <= 0 or trial_s <= 0 or goal_pct <= 0 or floor_mbps <= 0 or max_trials < 2:
        raise ValueError("rates, lengths and the goal must be positive, and at least two trials allowed")
    if not 0 <= loss_target_pct < 100:
        raise ValueError("the loss target is a percentage below 100")
    short = short_trial_s(trial_s) if short_s is None else min(short_s, trial_s)
    target = loss_target_pct / 100.0
    result = SearchResult(None)
    lo, hi = 0.0, max_mbps
    passes: list[tuple[float, bool]] = []  # (rate, at full length)
    failures: list[Trial] = []
    full_length = False  # from the first confirmation on, every trial is full length
    full_pass_at_lo = False  # lo passed a full-length trial while the goal was met
    misses = 0  # trials at an estimate that failed, in a row
    trust = True  # estimates from the lost rate (off once one proved too low)

    def width(at: float) -> float:
        return max(goal_pct / 100.0 * at, floor_mbps)

    def run(rate: float, duration: float) -> Trial | None:
        """One trial plus its generator repeats; updates the bounds. None: stop (generator)."""
        nonlocal lo, hi
        t: Trial | None = None
        for _ in range(generator_retries + 1):
            if len(result.trials) >= max_trials:
                return None
            t = replace(trial(rate, duration), duration_s=duration, lo_mbps=lo, hi_mbps=hi)
            result.trials.append(t)
            if not t.generator_limited:
                break
        assert t is not None
        if t.generator_limited and t.loss_pct <= loss_target_pct:
            result.generator_limited = True
            return None
        if t.passed:
            passes.append((rate, duration >= trial_s))
            lo = max(lo, rate)
        else:
            failures.append(t)
            at = min(rate, t.sent_mbps) if t.generator_limited else rate
            hi = min(hi, at, t.received_mbps / (1.0 - target))
            if lo >= hi:  # contradicts an earlier pass (noise, or a short trial's optimism)
                lo = max((r for r, _ in passes if r < hi), default=0.0)
        result.trials[-1] = replace(t, lo_mbps=lo, hi_mbps=hi)
        return t

    def estimate(duration: float) -> float | None:
        """Where the lost rate meets the target, from the failing trials of the next trial's
        length (a buffer makes a short trial lose less than a long one), else from all."""
        same = [f for f in failures if f.duration_s == duration] or failures
        pts = sorted((f.sent_mbps, f.sent_mbps * f.loss_pct / 100.0) for f in same if f.loss_pct > loss_target_pct)
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
                return None  # lost no more at higher rates: the losses say nothing of where they start
        if slope <= target * 1.5:
            return None
        zero = x1 - e1 / slope  # where the lost rate would be nil
        return slope * zero / (slope - target)

    first = run(max_mbps, short)
    if first is None:
        return _finish(result, lo, hi)
    while len(result.trials) < max_trials:
        running_out = len(result.trials) >= max_trials - 2  # the last two trials confirm what passed
        if lo > 0 and (hi - lo <= width(lo) or running_out):
            if full_pass_at_lo:
                result.rate_mbps, result.confirmed = lo, True
                break
            full_length = True
            confirm_at = lo
            t = run(confirm_at, trial_s)
            if t is None:
                break
            full_pass_at_lo = t.passed and lo == confirm_at
            if full_pass_at_lo and len(result.trials) >= max_trials:
                result.rate_mbps, result.confirmed = lo, True
            continue
        duration = trial_s if full_length else short
        guess = estimate(duration) if trust else None
        w = width(lo if lo > 0 else (guess or hi))
        probe = min(guess, hi) * (1 - goal_pct / 200.0) if guess is not None else None
        if probe is not None and misses:  # estimates that failed in a row: widen the step down
            probe = min(probe, hi * (1 - goal_pct / 200.0 * 4**misses))
        probing = probe is not None and lo + w / 4 < probe < hi
        stepping_above = False
        if probe is not None and probing:
            rate = probe  # just below where the loss should meet the target
        elif guess is not None and probe is not None and probe - w / 4 <= lo <= guess and lo + 0.9 * w < hi:
            rate = lo + 0.9 * w  # the pass just below the estimate: one goal-width above it
            stepping_above = True
        else:
            rate = (lo + hi) / 2  # no usable estimate: bisect
        rate = round(rate, 4)
        if not lo < rate < hi:
            rate = round((lo + hi) / 2, 4)
        t = run(rate, duration)
        if t is None:
            break
        misses = misses + 1 if probing and not t.passed else 0
        if stepping_above and t.passed and hi - lo > width(lo):
            trust = False  # the estimate was too low and more is open above: bisect from here on
        full_pass_at_lo = full_length and t.passed and lo == rate and hi - lo <= width(lo)
    if full_pass_at_lo and not result.confirmed and hi - lo <= width(lo):  # the last trial allowed confirmed it
        result.rate_mbps, result.confirmed = lo, True
    return _finish(result, lo, hi)


def _finish(result: SearchResult, lo: float, hi: float) -> SearchResult:
    result.lo_mbps, result.hi_mbps = lo, hi
    return result


def goal_met(result: SearchResult, goal_pct: float = GOAL_PCT, floor_mbps: float = FLOOR_MBPS) -> bool:
    """Whether the confirmed rate is within the goal of the upper bound (a search that ran out
    of trials confirms what passed, with a wider interval)."""
    lo, hi = result.lo_mbps, result.hi_mbps
    return result.confirmed and hi - lo <= max(goal_pct / 100.0 * lo, floor_mbps) + 1e-9
