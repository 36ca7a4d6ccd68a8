"""NDR/PDR search benchmark (RFC 9971, hil/scenarios/mlrsearch.py) on model paths with known
answers (tests/support/capacity_models.py): for each, the trials the one search used for both
goals, the traffic time it chose, and each goal's relevant lower bound against the model's true
rate, at the quick and the full profile's goals (PDR at 0.5 %). No bench, no root: the models
answer instantly.

Exits 1 when a model misses the acceptance: the NDR within 0.5 % and the PDR within 1 % of the
model's rate, both results regular (bounds within the goal's width, or the max load a lower bound),
in at most 6 trials, and "generator-limited" (never a number) where the generator cannot reach the
rate. The noisy models are also run over --seeds seeds and reported by their worst case.

Run from the project root:  python -m benchmarks.capacity_search [--seeds N]
"""

from __future__ import annotations

import argparse
import copy
import sys
from dataclasses import dataclass, replace

from hil.scenarios.mlrsearch import MlrResult, mlr_search
from hil.scenarios.profiles import DEFAULT_PDR_LOSS_PCT, FULL, QUICK, Profile
from tests.support.capacity_models import Model, NoisyLimit, benchmark_models

MAX_ERROR_PCT = {"NDR": 0.5, "PDR": 1.0}
MAX_TRIALS = 6


@dataclass
class Outcome:
    model: Model
    truth: dict[str, float | None]  # per goal: the model's rate (None: the generator is the limit)
    result: MlrResult

    def error_pct(self, goal: str) -> float | None:
        truth, found = self.truth[goal], self.result.goal(goal).lower_mbps
        return None if truth is None or found is None else 100.0 * (found - truth) / truth

    def problem(self) -> str | None:
        n = len(self.result.trials)
        if n > MAX_TRIALS:
            return f"{n} trials (> {MAX_TRIALS})"
        if all(t is None for t in self.truth.values()):
            if not self.result.generator_limited or any(g.lower_mbps is not None for g in self.result.goals):
                return "reported a rate instead of generator-limited"
            return None
        for g in self.result.goals:
            name = g.goal.name
            err = self.error_pct(name)
            if err is None:
                return f"{name}: nothing found ({g.status})"
            if abs(err) > MAX_ERROR_PCT[name]:
                return f"{name}: error {err:+.3f} % (> {MAX_ERROR_PCT[name]} %)"
            if g.status not in ("regular", "max load is a lower bound"):
                return f"{name}: {g.status}"
        return None


def run_model(model: Model, profile: Profile) -> Outcome:
    model = copy.deepcopy(model)  # each run from the model's initial state (the noisy one's seed)
    if isinstance(model, NoisyLimit):
        model.__post_init__()
    goals = profile.capacity_goals(DEFAULT_PDR_LOSS_PCT)
    truth = {g.name: model.capacity_mbps(profile.capacity_trial_s, 100 * g.loss_ratio) for g in goals}
    return Outcome(model, truth, mlr_search(model, goals, model.line_mbps, gated="PDR"))


def row(name: str, o: Outcome) -> str:
    cells = []
    for goal in ("NDR", "PDR"):
        truth, g = o.truth[goal], o.result.goal(goal)
        found = "gen-limited" if o.result.generator_limited and g.lower_mbps is None else f"{g.lower_mbps or 0:9.3f}"
        err = o.error_pct(goal)
        cells.append(
            f"{'-' if truth is None else f'{truth:9.3f}':>9s} {found:>11s} {'-' if err is None else f'{err:+7.3f}':>8s}"
        )
    return (
        f"{name:24s} {'  '.join(cells)} {len(o.result.trials):6d} {o.result.total_trial_s:7.1f}  {o.problem() or 'ok'}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100, help="seeds for the noisy models' worst case")
    args = ap.parse_args(argv)
    failures: list[str] = []
    for profile in (QUICK, FULL):
        goals = profile.capacity_goals(DEFAULT_PDR_LOSS_PCT)
        print(f"\n[{profile.name}] " + "; ".join(g.attributes() for g in goals))
        print(
            "(true: the model's rate for full-length trials at the goal's loss ratio; found: the relevant lower bound)"
        )
        print(
            f"{'model':24s} {'NDR true':>9s} {'found':>11s} {'error %':>8s}  {'PDR true':>9s} {'found':>11s} "
            f"{'error %':>8s} {'trials':>6s} {'trial s':>7s}  verdict"
        )
        for model in benchmark_models():
            o = run_model(model, profile)
            print(row(model.name, o))
            if p := o.problem():
                failures.append(f"[{profile.name}] {model.name}: {p}")
        for model in (m for m in benchmark_models() if isinstance(m, NoisyLimit)):
            runs = [run_model(replace(model, seed=s), profile) for s in range(args.seeds)]
            worst = max(
                runs,
                key=lambda o: (
                    o.problem() is not None,
                    max(abs(o.error_pct(g) or 1e9) for g in o.truth),
                    len(o.result.trials),
                ),
            )
            most = max(len(o.result.trials) for o in runs)
            print(row(f"{model.name} worst/{args.seeds}", worst) + f"  (max trials {most})")
            bad = [o for o in runs if o.problem()]
            if bad:
                failures.append(f"[{profile.name}] {model.name}: {len(bad)} of {args.seeds} seeds: {bad[0].problem()}")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print(
        f"\nall models: NDR within {MAX_ERROR_PCT['NDR']} %, PDR within {MAX_ERROR_PCT['PDR']} %, both in one search "
        f"of <= {MAX_TRIALS} trials; generator-limited where it should be"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
