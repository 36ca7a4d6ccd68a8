"""A pytest plugin (`-p tests.support.break_summary`) for tests/suite/test_suite_error.py: the run
summary's writer raises, as a bug of the suite's would."""

from __future__ import annotations

import pytest

import fixtures.report

PLANTED = "the summary writer broke (planted by tests/support/break_summary.py)"


def _broken(*args: object, **kwargs: object) -> object:
    raise RuntimeError(PLANTED)


def pytest_configure(config: pytest.Config) -> None:
    fixtures.report.write_run_summary = _broken  # type: ignore[assignment]
