"""The quick starts' commands as a user copies them: the `sh` blocks of docs/first-board-*.md, in
order, split at the page's first hardware step (the marker `<!-- first hardware step`): what comes
before runs on any PC (the virtual bench), what comes after needs the board."""

from __future__ import annotations

import re
from pathlib import Path

from hil.paths import PROJECT_ROOT

PAGES = sorted((PROJECT_ROOT / "docs").glob("first-board-*.md"))
HARDWARE_MARK = "<!-- first hardware step"
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)


def commands(page: Path) -> tuple[list[str], list[str]]:
    """(the commands before the first hardware step, the commands after it), one per line."""
    text = page.read_text()
    before, mark, after = text.partition(HARDWARE_MARK)
    if not mark:
        raise AssertionError(f"{page.name}: no {HARDWARE_MARK!r} marker")
    return _lines(before), _lines(after)


def _lines(text: str) -> list[str]:
    return [line.strip() for block in BLOCK.findall(text) for line in block.splitlines() if line.strip()]
