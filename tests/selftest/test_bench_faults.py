"""The one place whose-fault rules live (hil.bench_faults): each names the planted defect it must
not excuse, each of those is a defect the firmware has and the planted-defect test plants, and
docs/verdicts.md is made from it."""

from __future__ import annotations

import pytest

from hil.bench_faults import RETIRED, RULES, limited_by_tester, markdown, table
from hil.config.thresholds import Limits
from hil.dut.planted_defects import DEFECTS
from hil.paths import PROJECT_ROOT
from hil.results.recorder import CaseRecord, make_record
from hil.stats import summarize
from tests.suite.test_planted_defects import DEFECTS as PLANTED

pytestmark = pytest.mark.selftest


def test_every_rule_names_defects_the_firmware_has_and_the_planted_test_plants() -> None:
    planted = {p.planted.split("=")[0] for p in PLANTED}
    for entry in (*RULES, *RETIRED):
        for defect in entry.must_not_excuse:
            assert defect in DEFECTS, f"{entry.name}: {defect} is not a defect of the firmware's `fault`"
            assert defect in planted, f"{entry.name}: {defect} is not planted by tests/suite/test_planted_defects.py"
    guarded = {p.guard for p in PLANTED}
    assert guarded <= {r.name for r in RULES} | {t.name for t in RETIRED}, guarded


def test_the_docs_page_is_made_from_the_rules() -> None:
    page = (PROJECT_ROOT / "docs" / "verdicts.md").read_text()
    assert page == markdown(), "docs/verdicts.md is stale: python -m hil.bench_faults > docs/verdicts.md"
    text = table()
    for entry in (*RULES, *RETIRED):
        assert entry.name in page and entry.name in text


def _rfc2544_record(ndr_fps: float, tester_fps: float, limited: bool = True) -> CaseRecord:
    rec = make_record("rfc2544", "downlink-f512", "dut", summarize([ndr_fps * 512 * 8 / 1e6]), 96.24)
    rec.measured.update(ndr_fps=ndr_fps, tester_fps=tester_fps)
    rec.extra.update(tester_limited=limited, tester_ceiling_from="measured now, the tester's ends joined directly")
    return rec


def test_a_tester_short_of_the_line_excuses_only_the_rate_it_could_not_offer() -> None:
    """TESTER_LIMITED: the DUT forwarded what the tester, measured without the DUT, could send:
    the rate criteria are the tester's. A DUT that forwarded clearly less than the tester's ceiling,
    a ceiling never measured, or any other criterion missed stays the DUT's."""
    rate = Limits(min_efficiency_pct=90)
    assert limited_by_tester(_rfc2544_record(13_900, 14_000), rate) is not None
    assert limited_by_tester(_rfc2544_record(12_000, 14_000), rate) is None  # the DUT set its own number
    assert limited_by_tester(_rfc2544_record(13_900, 14_000, limited=False), rate) is None
    no_ceiling = _rfc2544_record(13_900, 14_000)
    del no_ceiling.extra["tester_ceiling_from"]
    assert limited_by_tester(no_ceiling, rate) is None
    lossy = _rfc2544_record(13_900, 14_000)
    lossy.loss_pct = 1.0
    assert limited_by_tester(lossy, Limits(min_efficiency_pct=90, max_loss_pct=0.1)) is None
