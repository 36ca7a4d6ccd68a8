"""The layers of hil/ the right way up: the configuration (hil/config: the sections DUT kinds
share, threshold profiles, one-line errors) is the leaf, below the console (hil/console) and the
DUT kinds (hil/dut); the console knows no DUT kind. What needs a registry above the
configuration - a console's dialect, the bench file's union of the kinds' sections - is checked
where that registry is (hil.dut.section, hil.dut.bench_file)."""

from __future__ import annotations

import pytest

from hil.paths import PROJECT_ROOT
from tests.selftest.test_recipe_counts import Sources, hil_sources

pytestmark = pytest.mark.selftest

# (the layer's folder, the hil packages it must not import)
BELOW = [
    ("hil/config/", ("hil.console", "hil.dut", "hil.plumbing", "hil.traffic", "hil.scenarios", "hil.session")),
    ("hil/console/", ("hil.dut", "hil.scenarios", "hil.session")),
    # the wire's evidence is read below the scenarios and the session, which open its windows
    ("hil/wire/", ("hil.scenarios", "hil.session", "hil.evidence", "hil.report", "hil.results")),
    ("hil/session.py", ("hil.report",)),  # the pytest layer labels a case's page (hil.report.case_labels)
]


@pytest.mark.parametrize(("folder", "above"), BELOW, ids=[b[0] for b in BELOW])
def test_a_layer_imports_nothing_above_it(folder: str, above: tuple[str, ...]) -> None:
    src = Sources(hil_sources())
    wrong = {
        path: sorted(m for m in imports if m.startswith(above))
        for path, imports in src.imports.items()
        if path.startswith(folder) and any(m.startswith(above) for m in imports)
    }
    assert not wrong, wrong


def test_the_configuration_layer_has_no_bench_file_of_kinds() -> None:
    assert not (PROJECT_ROOT / "hil" / "config" / "bench.py").exists()  # hil.dut.bench_file
