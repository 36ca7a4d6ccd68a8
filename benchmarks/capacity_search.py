"""Capacity search benchmark on model paths with known loss-free capacities
(tests/support/capacity_models.py): for each, the trials the search used, the traffic time it
chose (the sum of its trial lengths) and its error against the true capacity, at the quick and
the full profile's trial length. No bench, no root: the models answer instantly.

Exits 1 when a model misses the acceptance: error at most 0.5 % of the true capacity in at most
6 trials, and "generator-limited" (never a number) where the generator cannot reach the rate.
The noisy model is also run over --seeds seeds and reported by its worst case.

Run from the project root:  python -m benchmarks.capacity_search [--seeds N]
"""

from __future__ import annotations

import argparse
import copy
import sys
from dataclasses import dataclass, replace

from hil.scenarios.capacity_search import SearchResult, search
from hil.scenarios.profiles import FULL, QUICK
from tests.support.capacity_models import Model, NoisyLimit, benchmark_models

MAX_ERROR_PCT = 0.5
MAX_TRIALS = 6


@dataclass
class Outcome:
    model: Model
    capacity: float | None
    result: SearchResult

    @property
    def error_pct(self) -> float | None:
        if self.capacity is None or self.result.rate_mbps is None:
            return None
        return 100.0 * (self.result.rate_mbps - self.capacity) / self.capacity

    def problem(self) -> str | None:
        n = len(self.result.trials)
        if n > MAX_TRIALS:
            return f"{n} trials (> {MAX_TRIALS})"
        if self.capacity is None:
            if not self.result.generator_limited or self.result.rate_mbps is not None:
                return f"reported {self.result.rate_mbps} instead of generator-limited"
            return None
        err = self.error_pct
        if err is None:
            return "nothing found" + (" (generator-limited)" if self.result.generator_limited else "")
        if abs(err) > MAX_ERROR_PCT:
            return f"error {err:+.3f} % (> {MAX_ERROR_PCT} %)"
        return None


def run_model(model: Model, trial_s: float) -> Outcome:
    model = copy.deepcopy(model)  # each run from the model's initial state (the noisy one's seed)
    if isinstance(model, NoisyLimit):
        model.__post_init__()
    res = search(model, model.line_mbps, trial_s, model.target_pct)
    return Outcome(model, model.capacity_mbps(trial_s), res)


def row(name: str, o: Outcome) -> str:
    cap = "-" if o.capacity is None else f"{o.capacity:9.3f}"
    if o.result.generator_limited and o.result.rate_mbps is None:
        found, err = "generator-limited", "-"
    else:
        found = "none" if o.result.rate_mbps is None else f"{o.result.rate_mbps:9.3f}"
        err = "-" if o.error_pct is None else f"{o.error_pct:+7.3f}"
    verdict = o.problem() or "ok"
    return (
        f"{name:24s} {cap:>9s} {found:>17s} {err:>8s} {len(o.result.trials):6d} "
        f"{o.result.total_trial_s:7.1f}  {verdict}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100, help="seeds for the noisy model's worst case")
    args = ap.parse_args(argv)
    failures: list[str] = []
    for profile in (QUICK, FULL):
        trial_s = profile.capacity_trial_s
        print(f"\n[{profile.name}] full-length trials {trial_s:g} s, loss target 0.1 %, Mbit/s of UDP goodput")
        print("(capacity: the true loss-free rate for full-length trials; a receive ring lets shorter ones carry more)")
        print(f"{'model':24s} {'capacity':>9s} {'found':>17s} {'error %':>8s} {'trials':>6s} {'trial s':>7s}  verdict")
        for model in benchmark_models():
            o = run_model(model, trial_s)
            print(row(model.name, o))
            if p := o.problem():
                failures.append(f"[{profile.name}] {model.name}: {p}")
        for model in (m for m in benchmark_models() if isinstance(m, NoisyLimit)):
            runs = [run_model(replace(model, seed=s), trial_s) for s in range(args.seeds)]
            worst = max(runs, key=lambda o: (o.problem() is not None, abs(o.error_pct or 1e9), len(o.result.trials)))
            most = max(len(o.result.trials) for o in runs)
            print(row(f"{model.name} worst/{args.seeds}", worst) + f"  (max trials {most})")
            bad = [o for o in runs if o.problem()]
            if bad:
                failures.append(f"[{profile.name}] {model.name}: {len(bad)} of {args.seeds} seeds: {bad[0].problem()}")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"\nall models: error <= {MAX_ERROR_PCT} % in <= {MAX_TRIALS} trials; generator-limited where it should be")
    return 0


if __name__ == "__main__":
    sys.exit(main())
