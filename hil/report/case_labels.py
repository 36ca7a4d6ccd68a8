"""Where a case sits in the report (`label_epic`), and what a HIL case's page says of the DUT
before its traffic (`label_case`): the run's environment panel
(written once), faults found before the case (a DUT re-flashed after it went down), and the DUT
and profile as parameters (the firmware version shown, kept out of the case's history id)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import allure

from hil.console.protocol import FinalLine
from hil.report.allure_results import hil_epic

if TYPE_CHECKING:
    from hil.session import DutSession


def label_case(
    session: DutSession, identity: FinalLine, profile: str, allure_dir: Path | None,
    environment: Callable[[], dict[str, str]],
) -> None:  # fmt: skip
    if not session.environment_written:
        write_environment(allure_dir, environment())
        session.environment_written = True
    cfg = session.config
    allure.dynamic.parameter("DUT", f"{cfg.name} ({cfg.kind}, {identity.fields.get('version')})", excluded=True)
    allure.dynamic.parameter("profile", profile)


def describe_faults(session: DutSession) -> None:
    """What happened to the DUTs before this case (e.g. one was down and re-flashed), as the case's
    description; written in the call phase (allure-pytest sets the description from the docstring
    after setup, so one written by a fixture would be lost)."""
    if session.faults:
        allure.dynamic.description("\n".join(f"Before this test: {fault}" for fault in session.faults))
    session.faults.clear()


def label_epic(test_path: Path, tests_root: Path, dut_name: str | None) -> None:
    """The epic of every case: the HIL matrix of the DUT (a HIL case names its family and group
    itself), or the suite's self-tests grouped by their directory and module."""
    try:
        parts = test_path.relative_to(tests_root).parts
    except ValueError:
        return
    if parts and parts[0] == "hil":
        allure.dynamic.epic(hil_epic(dut_name))
    else:
        allure.dynamic.epic("suite self-tests")
        allure.dynamic.feature(f"{parts[0]}: {Path(parts[-1]).stem.removeprefix('test_')}" if parts else "other")


def write_environment(allure_dir: Path | None, env: dict[str, str]) -> None:
    """Allure's environment.properties (keys must not contain spaces)."""
    if allure_dir is None:
        return
    allure_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"{k}={v}".replace("\n", " ") for k, v in env.items()]
    (allure_dir / "environment.properties").write_text("\n".join(lines) + "\n")
