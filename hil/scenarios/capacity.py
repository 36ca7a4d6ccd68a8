"""Loss-free UDP capacity search (RFC 2544 style, as TRex's ndr_bench and nfvbench do it):
the highest offered rate whose loss stays at or below a target.

The first trial offers the theoretical goodput of the link. If it loses too much, its received
rate brackets the capacity from below; the search then bisects to a resolution and ends with a
confirmation trial at the rate it found. Every trial checks the generator's achieved rate: a
trial whose generator fell short is repeated once (a busy host PC), and a generator that still
cannot reach a rate the link could carry stops the search as "generator-limited" instead of
producing a false number for the DUT. Every trial, repeated ones too, stays in the trial log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Trial:
    offered_mbps: float
    sent_mbps: float
    received_mbps: float
    loss_pct: float
    generator_limited: bool
    passed: bool


@dataclass
class SearchResult:
    rate_mbps: float | None  # highest offered rate that passed (None: nothing passed)
    trials: list[Trial] = field(default_factory=list)
    generator_limited: bool = False
    confirmed: bool = False


def search(
    trial: Callable[[float], Trial],
    max_mbps: float,
    resolution_mbps: float,
    max_trials: int = 10,
    bracket_margin: float = 0.98,
    generator_retries: int = 1,
) -> SearchResult:
    """Brackets and bisects to `resolution_mbps`, then confirms; a rate that fails its
    confirmation becomes the new upper bound and the search goes on below it, within
    `max_trials`. The result is the highest confirmed rate (None if none could be confirmed)."""
    if max_mbps <= 0 or resolution_mbps <= 0 or max_trials < 2:
        raise ValueError("max rate and resolution must be positive, and at least two trials allowed")
    result = SearchResult(None)
    passed: list[float] = []

    def run(rate: float) -> Trial:
        for _ in range(generator_retries + 1):
            t = trial(rate)
            result.trials.append(t)
            if not t.generator_limited:
                break
        result.generator_limited = result.generator_limited or t.generator_limited
        if t.passed:
            passed.append(rate)
        return t

    lo, hi = 0.0, max_mbps
    first = run(max_mbps)
    if first.generator_limited:
        return result
    if first.passed:
        lo = max_mbps
    else:
        hi = max_mbps
        guess = round(min(max_mbps, first.received_mbps) * bracket_margin, 3)
        if guess > resolution_mbps:
            t = run(guess)
            if t.generator_limited:
                return result
            lo, hi = (guess, hi) if t.passed else (lo, guess)
    while len(result.trials) < max_trials:
        if hi - lo <= resolution_mbps or lo >= max_mbps:
            if lo <= 0:
                break
            confirm = run(lo)
            if confirm.generator_limited:
                return result
            if confirm.passed:
                result.confirmed = True
                result.rate_mbps = lo
                return result
            hi = lo  # a marginal rate: search on below it
            lo = max((r for r in passed if r < hi), default=0.0)
            continue
        mid = round((lo + hi) / 2, 3)
        t = run(mid)
        if t.generator_limited:
            return result
        lo, hi = (mid, hi) if t.passed else (lo, mid)
    return result
