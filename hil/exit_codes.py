"""The suite's exit codes, so a CI job can tell a DUT failure (never retried) from a bench fault
(retried) from a usage or configuration error (fixed by a person). pytest's own codes keep their
meaning; a bench fault gets 75 (sysexits' EX_TEMPFAIL: try again later).

This module is where the codes are typed, once: `./suite` reads them with
`python3 -m hil.exit_codes --shell` (EXIT_BENCH_FAULT=75 ...), and docs/exit-codes.md shows the
table `python3 -m hil.exit_codes --markdown` prints (tests/selftest/test_exit_code_table.py). It
needs nothing beyond Python's standard library at import, so the system's python3 reads it
before the suite's venv exists.
"""

from __future__ import annotations

import argparse
import sys
from enum import IntEnum


class ExitCode(IntEnum):
    PASSED = 0
    DUT_FAILED = 1
    INTERRUPTED = 2
    SUITE_ERROR = 3
    USAGE_ERROR = 4
    NO_TESTS = 5
    BENCH_FAULT = 75


MEANING = {
    ExitCode.PASSED: "passed",
    ExitCode.DUT_FAILED: "DUT failure: a threshold missed, a regression, or the DUT misbehaved (do not retry)",
    ExitCode.INTERRUPTED: "interrupted",
    ExitCode.SUITE_ERROR: "an error of the suite itself (read the traceback; retrying will not help)",
    ExitCode.USAGE_ERROR: "usage or configuration error (fix the options or files; do not retry)",
    ExitCode.NO_TESTS: "no tests selected",
    ExitCode.BENCH_FAULT: "bench fault: the bench, not the DUT, failed (retry)",
}

SHORT = {
    ExitCode.DUT_FAILED: "DUT failure",
    ExitCode.SUITE_ERROR: "suite error",
    ExitCode.USAGE_ERROR: "usage/config error",
    ExitCode.BENCH_FAULT: "bench fault",
}

# docs/exit-codes.md's table, a row per code: (meaning, what a workflow should do, what shows it -
# the case tests/selftest/test_exit_codes.py runs for it)
TABLE_HEADER = ("code", "meaning", "a workflow should", "shown by")
TABLE = {
    ExitCode.PASSED: ("passed", "", "a passing case"),
    ExitCode.DUT_FAILED: (
        "**DUT failure**: a threshold missed, a regression against the baseline or the history "
        "(docs/history.md; with --confirm-misses on a DUT that runs on the bench PC: in two of three "
        "trials), the DUT leaked buffers, crashed, reset, fell "
        "silent, answered garbage (a malformed, infinite or out-of-range number in a reply), stopped "
        "forwarding or stopped answering after a tool of the bench failed; also a failed quality gate. Every "
        "miss no rule of docs/verdicts.md excuses",
        "never retry",
        "an `AssertionError`; a `DutError`",
    ),
    ExitCode.INTERRUPTED: (
        "interrupted (Ctrl-C, SIGTERM, SIGHUP; also a collection error); a case cut off is reported skipped, "
        "`INTERRUPTED`, never passed",
        "",
        "a run stopped by SIGINT",
    ),
    ExitCode.SUITE_ERROR: (
        "an error of the suite itself: a bug (one `hil: SUITE ERROR ...` line comes before its traceback, also "
        "when it happens after the cases, writing the run's summary), or the report could not be built",
        "report it; retrying will not help",
        "an unclassified exception",
    ),
    ExitCode.USAGE_ERROR: (
        "**usage or configuration error**: options, bench file, threshold file (an unknown scenario, case or "
        "metric, min above max, a negative limit, a key given twice), baseline, a firmware image that is "
        "missing, unreadable, not executable or of the wrong format; found before any bench comes up",
        "never retry; fix it",
        "a `ConfigError`",
    ),
    ExitCode.NO_TESTS: ("no tests selected", "", "an empty selection"),
    ExitCode.BENCH_FAULT: (
        "**bench fault**, proven by a rule of docs/verdicts.md: a sender of the bench (never the DUT) fell short "
        "of what a UDP case's rate asks with all it sent arrived and the DUT unable to slow it, a tool on the "
        "bench (iperf, ping) timed out or printed output that cannot be read while the DUT still answered, no "
        "probe or serial port, the peer host down, a labgrid place held by another run past the wait, set-up "
        "(apt, pip, npm, builds) failed; the DUT was not judged",
        "retry (once)",
        "a `BenchError`",
    ),
}

# which failure decides the run's code when cases failed in several ways: a DUT failure is never
# hidden behind a bench fault (a retry would not fix it)
PRECEDENCE = (ExitCode.DUT_FAILED, ExitCode.USAGE_ERROR, ExitCode.SUITE_ERROR, ExitCode.BENCH_FAULT)

TIMEOUT_PREFIX = "Timeout (>"  # pytest-timeout's failure: a case blocked on the bench PC


def classify(exc: BaseException) -> ExitCode:
    """What a failed case's exception says about the run."""
    # here, not at the top: the exceptions' modules need the venv's packages, the codes do not
    from hil.checks import BenchFault
    from hil.config.errors import ConfigError
    from hil.errors import BenchError, DutError

    if isinstance(exc, BenchFault | BenchError):  # BenchFault is an AssertionError: first
        return ExitCode.BENCH_FAULT
    if isinstance(exc, AssertionError | DutError):
        return ExitCode.DUT_FAILED
    if isinstance(exc, ConfigError):
        return ExitCode.USAGE_ERROR
    if str(exc).startswith(TIMEOUT_PREFIX):
        return ExitCode.BENCH_FAULT
    return ExitCode.SUITE_ERROR


def run_code(failures: list[ExitCode]) -> ExitCode:
    """The run's code from its failed cases' codes (none: passed)."""
    for code in PRECEDENCE:
        if code in failures:
            return code
    return ExitCode.PASSED


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


INTERRUPTED = "INTERRUPTED"
SUITE_ERROR_LINE = "SUITE ERROR (a bug of the suite, not the DUT's or the bench's)"


def cut_off(when: str, seconds: float, why: BaseException) -> tuple[str, str]:
    """Why a case that Ctrl-C, SIGTERM or SIGHUP cut off has no verdict (it is reported skipped),
    and where it was cut off, for the run's last lines."""
    what = "while its set-up ran (flashing, bench)" if when == "setup" else "while it ran"
    reason = (
        f"{INTERRUPTED}: the run was stopped ({why or type(why).__name__}) {what}, {seconds:.1f} s into it: "
        "the case was not measured to the end and has no verdict"
    )
    return reason, f"{what}, {seconds:.1f} s in"


def internal_error_line(exc: BaseException) -> str:
    """pytest's own INTERNALERROR (an exception in a hook) as one line before its traceback."""
    return (
        f"hil: SUITE ERROR (a bug of the suite, exit code {int(ExitCode.SUITE_ERROR)}): {one_line(exc)}; "
        "pytest's INTERNALERROR traceback follows\n"
    )


def suite_error_line(what: str, exc: BaseException) -> str:
    """An exception of the suite's own code outside a case (e.g. writing the run's summary) as one
    line before its traceback: the run ends SUITE_ERROR, not as the DUT's failure."""
    return (
        f"hil: SUITE ERROR (a bug of the suite, exit code {int(ExitCode.SUITE_ERROR)}): {what}: {one_line(exc)}; "
        "its traceback follows\n"
    )


NEEDS_ROOT = (
    "{n} selected tests need the virtual bench, which needs root (CAP_NET_ADMIN) for network namespaces and "
    "tap devices: run as root (sudo), or select `-m selftest`"
)


def verdict_line(code: ExitCode, failures: list[ExitCode]) -> str:
    """The run's last line: its exit code, what it means, and its failed cases by class."""
    counts = ", ".join(f"{failures.count(c)} {SHORT[c]}" for c in ExitCode if c in failures)
    return f"hil: exit code {int(code)}: {MEANING[code]} (failed cases: {counts})"


def shell_lines() -> list[str]:
    """`EXIT_<NAME>=<code>` for every code, as ./suite evaluates them."""
    return [f"EXIT_{code.name}={int(code)}" for code in ExitCode]


def markdown_table() -> list[str]:
    """docs/exit-codes.md's table."""
    lines = ["| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
    for code in ExitCode:
        meaning, workflow, shown_by = TABLE[code]
        lines.append(f"| {int(code)} | {meaning} | {workflow} | {shown_by} |".replace("|  |", "| |"))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m hil.exit_codes", description="The suite's exit codes.")
    form = parser.add_mutually_exclusive_group(required=True)
    form.add_argument("--shell", action="store_true", help="EXIT_<NAME>=<code> lines, for a shell's eval")
    form.add_argument("--markdown", action="store_true", help="the table of docs/exit-codes.md")
    args = parser.parse_args(argv)
    print("\n".join(shell_lines() if args.shell else markdown_table()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
