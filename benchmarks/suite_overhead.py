"""The suite's overhead: how much of a run's wall-clock time is not traffic, per scenario family.

Runs the quick matrix on the virtual bench (or reads a finished run with --from) and prints, per
family, the wall-clock time of its pytest cases (JUnit XML: set-up, call and tear-down), the
seconds of traffic its numbers come from (each record's `traffic_s` in results.jsonl: iperf
durations, capacity trials, pings, streams) and the overhead (wall - traffic) / traffic. The
session's one-off set-up (namespaces, the first DUT boot) is in the first case's time and so in
its family's overhead. Exits 1 when the whole matrix's overhead exceeds --max-overhead-pct.

Where the time goes: each case's steps (timings.jsonl, hil.step_clock: bring-up, console round
trips, captures, counters, probes, summaries, attachments, each exclusive of the steps inside it)
summed per family, the top costs printed; the steps that are the DUT's own (a robustness class's
recovery: `(the DUT's own ...)` in the name) are shown apart and left out of the overhead beside it.

Run as root from the project root:
  python -m benchmarks.suite_overhead                 # the quick matrix, 3 repetitions (./suite main's)
  python -m benchmarks.suite_overhead --from DIR      # a run's DIR/results.jsonl and DIR/junit.xml
  python -m benchmarks.suite_overhead --sample        # the run under py-spy: the functions that cost the time
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from benchmarks import sampled_profile
from hil.paths import PROJECT_ROOT

MAX_OVERHEAD_PCT = 10.0


@dataclass
class FamilyTime:
    cases: int = 0
    wall_s: float = 0.0
    traffic_s: float = 0.0

    @property
    def overhead_pct(self) -> float | None:
        return 100.0 * (self.wall_s - self.traffic_s) / self.traffic_s if self.traffic_s > 0 else None


def case_times(junit: Path) -> dict[str, float]:
    """Wall-clock seconds per pytest node id (JUnit's time: set-up + call + tear-down)."""
    out = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        module = tc.get("classname", "").replace(".", "/")
        out[f"{module}.py::{tc.get('name')}"] = float(tc.get("time", "0"))
    return out


def family_of(scenario: str) -> str:
    """`length_udp` -> length, `stress-patient-monitoring` -> stress, `window_dut` -> window_dut."""
    if scenario.startswith("stress-"):
        return "stress"
    head, _, tail = scenario.partition("_")
    return head if tail in ("tcp", "udp", "pc") else scenario


def overhead_by_family(results: Path, junit: Path) -> dict[str, FamilyTime]:
    walls = case_times(junit)
    traffic: dict[str, float] = defaultdict(float)
    family: dict[str, str] = {}
    for line in results.read_text().splitlines():
        rec = json.loads(line)
        if "median" not in rec or not rec.get("test"):
            continue  # verdict lines
        traffic[rec["test"]] += float(rec.get("traffic_s") or 0.0)
        family.setdefault(rec["test"], family_of(rec["scenario"]))
    out: dict[str, FamilyTime] = defaultdict(FamilyTime)
    for test, fam in family.items():
        t = out[fam]
        t.cases += 1
        t.wall_s += walls.get(test, 0.0)
        t.traffic_s += traffic[test]
    return dict(out)


DUT_OWN = "(the DUT's own"  # a step whose time is the DUT's own (its recovery), not the suite's


def step_costs(timings: Path, results: Path) -> dict[str, dict[str, float]]:
    """Seconds per step per family over the cases of the last run in `timings` that recorded a number."""
    family: dict[str, str] = {}
    for line in results.read_text().splitlines():
        rec = json.loads(line)
        if "median" in rec and rec.get("test"):
            family.setdefault(rec["test"], family_of(rec["scenario"]))
    rows = [json.loads(line) for line in timings.read_text().splitlines() if line.strip()]
    last = rows[-1]["run"] if rows else None
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in rows:
        if row["run"] != last or row["test"] not in family:
            continue
        for step, seconds in row["steps"].items():
            out[family[row["test"]]][step] += seconds
    return {fam: dict(steps) for fam, steps in out.items()}


def costs_report(costs: dict[str, dict[str, float]], times: dict[str, FamilyTime], top: int = 5) -> list[str]:
    """Per family its top costs beside the traffic, then the matrix's; the DUT's own apart."""
    lines = []
    whole: dict[str, float] = defaultdict(float)
    for fam in sorted(costs):
        steps = costs[fam]
        for k, v in steps.items():
            whole[k] += v
        own = sum(v for k, v in steps.items() if DUT_OWN in k)
        t = times.get(fam)
        suite_pct = 100.0 * (t.wall_s - t.traffic_s - own) / t.traffic_s if t is not None and t.traffic_s > 0 else None
        head = f"{fam}: the suite's overhead {_pct(suite_pct).strip()}" + (
            f" (the DUT's own {own:.1f} s apart)" if own else ""
        )
        ranked = sorted(((v, k) for k, v in steps.items() if k != "traffic"), reverse=True)[:top]
        lines.append(head)
        lines += [f"    {v:7.1f} s  {k}" for v, k in ranked]
    lines.append("the whole matrix:")
    ranked = sorted(((v, k) for k, v in whole.items() if k != "traffic"), reverse=True)[: 2 * top]
    lines += [f"    {v:7.1f} s  {k}" for v, k in ranked]
    return lines


def report(times: dict[str, FamilyTime]) -> tuple[list[str], float | None]:
    lines = [f"{'family':14s} {'cases':>5s} {'wall s':>8s} {'traffic s':>9s} {'overhead':>9s}"]
    total = FamilyTime()
    for name, t in sorted(times.items()):
        pct = t.overhead_pct
        lines.append(f"{name:14s} {t.cases:5d} {t.wall_s:8.1f} {t.traffic_s:9.1f} {_pct(pct)}")
        total.cases += t.cases
        total.wall_s += t.wall_s
        total.traffic_s += t.traffic_s
    lines.append(f"{'all':14s} {total.cases:5d} {total.wall_s:8.1f} {total.traffic_s:9.1f} {_pct(total.overhead_pct)}")
    return lines, total.overhead_pct


def _pct(pct: float | None) -> str:
    return f"{pct:8.1f}%" if pct is not None else f"{'-':>9s}"


def run_matrix(workdir: Path, repeat: int, extra: list[str], sample: bool = False) -> None:
    argv = [
        sys.executable, "-m", "pytest", "tests/hil", "--profile", "quick", "--repeat", str(repeat), "-q",
        "--results-dir", str(workdir), f"--alluredir={workdir / 'allure'}", f"--junitxml={workdir / 'junit.xml'}",
        *extra,
    ]  # fmt: skip
    print("$", " ".join(argv), flush=True)
    if sample:  # the same run under py-spy (benchmarks.sampled_profile)
        sampled_profile.recorded(argv, workdir / SAMPLES, cwd=PROJECT_ROOT)
        return
    subprocess.run(argv, cwd=PROJECT_ROOT, check=False)


SAMPLES = "py-spy.raw"  # the run's stacks sampled by py-spy (--sample), in its directory


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="source", type=Path, help="a finished run's directory (results.jsonl, junit.xml)")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions per case (default 3, as ./suite main)")
    ap.add_argument("--max-overhead-pct", type=float, default=MAX_OVERHEAD_PCT)
    ap.add_argument("--sample", action="store_true",
                    help="run the matrix under py-spy and print the suite's functions that cost the time")  # fmt: skip
    args, extra = ap.parse_known_args()
    if args.source is None:
        workdir = Path(tempfile.mkdtemp(prefix="hil-overhead-"))
        run_matrix(workdir, args.repeat, extra, args.sample)
    else:
        workdir = args.source
    results, junit = workdir / "results.jsonl", workdir / "junit.xml"
    for f in (results, junit):
        if not f.is_file():
            print(f"suite_overhead: {f} not found (a run with --junitxml and --results-dir there)", file=sys.stderr)
            return 2
    times = overhead_by_family(results, junit)
    lines, total = report(times)
    print("\n== suite overhead on the quick matrix: (wall - traffic) / traffic, per family")
    print("\n".join(lines))
    timings = workdir / "timings.jsonl"
    if timings.is_file():
        print("\n== where the time goes beside the traffic (seconds, summed over each family's cases)")
        print("\n".join(costs_report(step_costs(timings, results), times)))
    if (workdir / SAMPLES).is_file():
        print("\n== the suite's process, sampled by py-spy (benchmarks.sampled_profile)")
        with (workdir / SAMPLES).open() as raw:
            print("\n".join(sampled_profile.report(sampled_profile.summarise(raw))))
    if total is None:
        print("no traffic recorded", file=sys.stderr)
        return 1
    verdict = "within" if total <= args.max_overhead_pct else "ABOVE"
    print(f"overhead {total:.1f} % - {verdict} the target of {args.max_overhead_pct:g} %")
    return 0 if total <= args.max_overhead_pct else 1


if __name__ == "__main__":
    sys.exit(main())
