"""`./suite doctor [--bench FILE] [--dut-name NAME] [--labgrid-place NAME]`: every check the bench
needs, one line each with its fix; exit 0 when the bench can run, 4 with every problem listed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from hil.config.errors import ConfigError
from hil.doctor.finding import Finding, problem
from hil.doctor.pair import in_pairs, join, pairs_of
from hil.doctor.plan import Check, dut_checks, host_checks
from hil.dut.bench_file import DEFAULT_BENCH_FILE, load_bench
from hil.errors import BenchError, DutError
from hil.exit_codes import ExitCode


def _run(check: Check) -> list[Finding]:
    """A check's findings; one that raised is its own problem line, never a traceback."""
    try:
        return check()
    except (BenchError, DutError, ConfigError, OSError, ValueError) as exc:
        return [problem("check", f"{type(exc).__name__}: {exc}".splitlines()[0], "report this check's failure")]


def _report(checks: list[Check]) -> Iterator[bool]:
    """Each finding of the checks printed as it comes; whether it is a problem."""
    for check in checks:
        for finding in _run(check):
            print(finding.line(), flush=True)
            yield finding.problem


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./suite doctor", description=__doc__)
    parser.add_argument("--bench", type=Path, default=DEFAULT_BENCH_FILE, help="the bench file (default: %(default)s)")
    parser.add_argument("--dut-name", help="check only this DUT of the bench file")
    parser.add_argument("--labgrid-place", help="the DUT is reached through this labgrid place")
    try:
        opt = parser.parse_args(argv)
    except SystemExit as exc:  # argparse's usage error (2) is the suite's usage error
        return ExitCode.USAGE_ERROR if exc.code else ExitCode.PASSED
    try:
        bench = load_bench(opt.bench)
    except ConfigError as exc:
        print(f"doctor: {exc}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    duts = [d for d in bench.duts if opt.dut_name in (None, d.name)]
    if not duts:
        names = ", ".join(d.name for d in bench.duts)
        print(f"doctor: {opt.bench}: no DUT named {opt.dut_name!r} (bench has: {names})", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    print(f"doctor: bench {bench.name} ({opt.bench}): the PC")
    problems = sum(_report(list(host_checks(bench))))
    pairs = pairs_of(bench) if opt.dut_name is None else []  # one DUT asked for: that DUT alone
    paired, failed = in_pairs(pairs), set()
    for dut in duts:
        print(f"doctor: DUT {dut.name} (kind {dut.kind})")
        said = list(_report(list(dut_checks(dut, opt.labgrid_place, None, dut.name in paired))))
        if dut.name in paired:
            print("     brought up with its pair: below")
        found = sum(said)
        problems += found
        failed |= {dut.name} if found else set()
    for pair in pairs:  # both DUTs brought up together, as a run does (hil.doctor.pair)
        print(f"doctor: {pair.title}, as a run joins them")
        held_back = [d.name for d in (pair.front, pair.second) if d.name in failed]
        if held_back:
            print(f"     not joined: mend DUT {', '.join(held_back)} above first")
            continue
        problems += sum(_report([lambda p=pair: join(p)]))  # type: ignore[misc]
    if problems:
        print(f"doctor: {problems} problem(s): the bench cannot run yet (exit {int(ExitCode.USAGE_ERROR)})")
        return ExitCode.USAGE_ERROR
    print(f"doctor: the bench can run: ./suite ci --bench {opt.bench}")
    return ExitCode.PASSED


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("doctor: interrupted", file=sys.stderr)
        sys.exit(ExitCode.INTERRUPTED)
