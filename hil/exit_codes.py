"""The suite's exit codes, so a CI job can tell a DUT failure (never retried) from a bench fault
(retried) from a usage or configuration error (fixed by a person). pytest's own codes keep their
meaning; a bench fault gets 75 (sysexits' EX_TEMPFAIL: try again later).

    0   passed
    1   the DUT failed: missed a threshold, regressed against the baseline, crashed or answered garbage
    2   interrupted (Ctrl-C, SIGTERM) or a collection error
    3   an error of the suite itself (a traceback nothing classified), or pytest's internal error
    4   usage or configuration error: options, bench file, threshold profile, baseline
    5   no tests selected
    75  bench fault: the traffic generator fell short, a DUT emulated on the bench PC starved, no
        probe or port, peer host down, bench set-up failed; the DUT was not judged
"""

from __future__ import annotations

from enum import IntEnum

from hil.checks import BenchFault
from hil.config.errors import ConfigError
from hil.errors import BenchError, DutError


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

# which failure decides the run's code when cases failed in several ways: a DUT failure is never
# hidden behind a bench fault (a retry would not fix it)
PRECEDENCE = (ExitCode.DUT_FAILED, ExitCode.USAGE_ERROR, ExitCode.SUITE_ERROR, ExitCode.BENCH_FAULT)

TIMEOUT_PREFIX = "Timeout (>"  # pytest-timeout's failure: a case blocked on the bench PC


def classify(exc: BaseException) -> ExitCode:
    """What a failed case's exception says about the run."""
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
