"""The report's pictures in docs/report.md are the ones the test command takes (hil.report.check's
--docs-screenshots, from the planted-defect run's report): each one the check writes is shown on
the page, and each is a PNG of the check's window size."""

from __future__ import annotations

import struct

import pytest

from hil.paths import PROJECT_ROOT
from hil.report.check import DOCS_SHOTS

pytestmark = pytest.mark.selftest

PAGE = PROJECT_ROOT / "docs" / "report.md"


@pytest.mark.parametrize("name", sorted(DOCS_SHOTS.values()))
def test_each_report_picture_is_on_the_page_and_a_png(name: str) -> None:
    assert f"](img/{name})" in PAGE.read_text(), f"docs/report.md does not show img/{name}"
    head = (PROJECT_ROOT / "docs" / "img" / name).read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert (width, height) == (1400, 1300), (width, height)
