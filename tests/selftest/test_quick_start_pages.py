"""The quick starts hold only commands that exist: each `./suite` subcommand is one the script has,
each bench, threshold or firmware path is in the repository, and both pages start with the same
commands on the virtual bench (the ones tests/suite/test_quick_starts.py runs from a clone)."""

from __future__ import annotations

import re

import pytest

from hil.paths import PROJECT_ROOT
from tests.support.quick_start_pages import PAGES, commands

pytestmark = pytest.mark.selftest

SUBCOMMANDS = set(re.findall(r"^  ([a-z-]+)\)", (PROJECT_ROOT / "suite").read_text(), re.M))


def test_there_are_two_pages_each_with_its_hardware_step() -> None:
    assert [p.name for p in PAGES] == ["first-board-esp32.md", "first-board-same70.md"]
    for page in PAGES:
        before, after = commands(page)
        assert before and after, page.name


def test_both_pages_try_the_virtual_bench_first_with_the_same_commands() -> None:
    assert commands(PAGES[0])[0] == commands(PAGES[1])[0]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_suite_command_and_file_of_the_page_exists(page) -> None:  # type: ignore[no-untyped-def]
    before, after = commands(page)
    for line in before + after:
        for sub in re.findall(r"\./suite (\S+)", line):
            assert sub in SUBCOMMANDS, f"{page.name}: ./suite {sub}: no such command ({sorted(SUBCOMMANDS)})"
        for path in re.findall(r"\b((?:bench|thresholds|firmware)/[\w./-]+)", line):
            if not path.startswith("bench/my-"):  # the user's own copy, made on the page
                assert (PROJECT_ROOT / path).exists(), f"{page.name}: {path} does not exist"
        for copy in re.findall(r"cp (bench/\S+) ", line):
            assert (PROJECT_ROOT / copy).is_file(), f"{page.name}: {copy} does not exist"


def test_a_missing_subcommand_would_be_found() -> None:
    assert "doctor" in SUBCOMMANDS and "ci" in SUBCOMMANDS and "frobnicate" not in SUBCOMMANDS
