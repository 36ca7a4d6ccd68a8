"""The scenario-family recipe's count (docs/architecture.md, "Adding a scenario family"): a family
is its module in hil/scenarios/families/ and its test. Nothing else lists it: the registry finds
its module (hil.scenarios.contract.families), no module of the suite imports a family's module
(the sweep families' run, hil/scenarios/run_point.py, apart), pytest.ini names no family's
marker, the threshold catalogue is its `shapes`, and its default limits need no threshold file."""

from __future__ import annotations

import ast
import configparser
import pkgutil
from pathlib import Path

import pytest

from hil.paths import PROJECT_ROOT
from hil.scenarios import families as package
from hil.scenarios.catalog import scenarios
from hil.scenarios.contract import families

pytestmark = pytest.mark.selftest

FAMILY_MODULES = {f"hil.scenarios.families.{m.name}" for m in pkgutil.iter_modules(package.__path__)}
SWEEP_RUN = "hil/scenarios/run_point.py"  # runs a point of the sweep families (hil.scenarios.families.sweeps)


def suite_files() -> list[Path]:
    roots = [PROJECT_ROOT / "hil", PROJECT_ROOT / "fixtures", PROJECT_ROOT / "tests" / "hil"]
    return [p for r in roots for p in r.rglob("*.py")] + [PROJECT_ROOT / "conftest.py"]


def importers(module_names: set[str], files: list[Path], root: Path = PROJECT_ROOT) -> dict[str, set[str]]:
    """Files (the suite's: hil/, fixtures/, tests/hil/, conftest.py) outside the families' package
    that import one of `module_names`."""
    found: dict[str, set[str]] = {}
    for path in files:
        rel = path.relative_to(root).as_posix()
        if rel.startswith("hil/scenarios/families/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            if hits := set(names) & module_names:
                found.setdefault(rel, set()).update(hits)
    return found


def test_no_module_of_the_suite_lists_or_imports_a_family() -> None:
    found = importers(FAMILY_MODULES, suite_files())
    assert set(found) <= {SWEEP_RUN}, found
    assert found.get(SWEEP_RUN, set()) <= {"hil.scenarios.families.sweeps"}, found


def test_the_count_fails_when_a_second_list_appears(tmp_path: Path) -> None:
    """The check above catches what it should: a module importing a family (a list of families)."""
    planted = tmp_path / "hil" / "family_list.py"
    planted.parent.mkdir()
    planted.write_text("from hil.scenarios.families import sweeps\n")
    found = importers(FAMILY_MODULES, [planted], tmp_path)
    assert found == {"hil/family_list.py": {"hil.scenarios.families.sweeps"}}


def test_every_family_is_registered_from_its_module_with_its_marker_and_scenarios() -> None:
    registered = families()
    # every module of the package registers a family (the sweeps' module its instances of its own
    # Family class), every family lives in one
    assert {type(f).__module__ for f in registered} == FAMILY_MODULES
    ini = configparser.ConfigParser()
    ini.read(PROJECT_ROOT / "pytest.ini")
    declared = {line.split(":")[0].strip() for line in ini["pytest"]["markers"].splitlines() if ":" in line}
    assert not declared & {f.marker for f in registered}, "a family's marker comes from its definition"
    shapes = [s.name for s in scenarios()]
    assert len(shapes) == len(set(shapes))  # one family owns each scenario key
