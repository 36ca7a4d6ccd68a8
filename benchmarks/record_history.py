"""Records a bench's run history for benchmarks/detection_power.py: --runs child runs of the
suite (the baseline and latency families as the test command runs them: the link at 20 Mbit/s,
thresholds/virtual-20m.yaml, here with 3 repetitions per case) with the firmware as built, one
after the other into one results folder, so that its history (``history/metrics.jsonl``, one
line per run: every trend metric, each case's repetitions, the build) is what a CI job's would be
after that many unchanged runs. --busy keeps cores busy as `./suite test --busy N` does.

Run as root from the project root:
  python -m benchmarks.record_history --bench virtual --runs 20 --busy 0 -o benchmarks/data/virtual-20m-idle.jsonl
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tests.support.child_suite import run_suite
from tests.support.planted import RUN_ARGS, busy_cores

SELECTION = ("-m", "baseline or latency", "-k", "not flood and not loaded")
# each bench as the test command runs it: the virtual bench at 20 Mbit/s (RUN_ARGS), QEMU at its own link
BENCHES = {
    "virtual": (*RUN_ARGS, *SELECTION),
    "qemu": ("--bench", "bench/qemu.yaml", "--profile", "quick", "--confirm-misses", *SELECTION),
}
REPEAT = 3  # repetitions per case: the change-point analysis weighs each run by them


def record(bench: str, runs: int, busy: int, out: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="hil-history-") as tmp:
        results = Path(tmp) / "results"
        failed = 0
        for i in range(runs):
            began = time.monotonic()
            with busy_cores(busy):
                proc = run_suite(results, *BENCHES[bench], "--repeat", str(REPEAT), timeout=900, tests="tests/hil")
            failed += proc.returncode != 0
            print(f"run {i + 1}/{runs}: exit {proc.returncode} in {time.monotonic() - began:.0f} s", flush=True)
            if proc.returncode != 0:  # kept in the recording (a bench's history holds its failed runs too): why
                said = [x for x in proc.stdout.splitlines() if x.startswith(("FAILED", "ERROR", "hil: exit"))]
                print("  " + "\n  ".join(said[-5:] or proc.stdout.splitlines()[-5:]), flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(results / "history" / "metrics.jsonl", out)
    print(f"{out}: {runs} runs of bench {bench}, {busy} core(s) busy; {failed} run(s) did not pass")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.record_history", description=__doc__.splitlines()[0])
    p.add_argument("--bench", choices=sorted(BENCHES), default="virtual")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--busy", type=int, default=0, help="cores kept busy (as ./suite test --busy N)")
    p.add_argument("-o", "--output", type=Path, required=True)
    opt = p.parse_args(argv)
    if opt.runs < 2 or opt.busy < 0:
        p.error("--runs takes 2 or more, --busy 0 or more")
    return record(opt.bench, opt.runs, opt.busy, opt.output)


if __name__ == "__main__":
    sys.exit(main())
