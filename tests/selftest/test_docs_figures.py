"""Threshold figures in the docs cannot drift from the threshold files: a figure a page quotes is
tied to the limit it shows by a comment right before it, and this test loads the file and compares.

    ... efficiency 99.4 % <!-- threshold: virtual-100m baseline/tcp-dut_tx.min_efficiency_pct ">= 90.0 %" --> >= 90.0 %

A tie is `PROFILE PATH "FIGURE"`, several in one comment separated by `;`:
- PROFILE: a threshold file's name (`thresholds/PROFILE.yaml`, read as a run reads it: with the
  scenario families' default limits under the scenarios it does not name), or `family-default`
  for the families' own default limits (`Family.default_limits`, hil.scenarios.contract);
- PATH: `SCENARIO/CASE.KEY` (the case's limits as the checker finds them: its own entry, its
  direction's, its scenario's `default`), `trends.LADDER.KEY`, `regression.SCENARIO.KEY` or
  `link_mbit`;
- FIGURE: the text as the page shows it after the comment, within its paragraph (line breaks
  inside it are free); its last number is compared with the file's value to the decimals shown.
The comment goes inside the sentence (or on a line of its own before a fenced block): a line of a
paragraph that starts with a comment would end the paragraph there.

A figure that only looks like a limit (a measured value, a goal, a version, an example of the
syntax) says so the same way: `<!-- not a threshold: "FIGURE" why -->`. Every threshold-like
figure (a number after >= or <=, `min_<metric>: N`, "gated at N", "floors at N") on a page must be
one or the other, so a figure added without a tie fails here too. The convention is described in
docs/thresholds.md, "Figures on these pages"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from hil.config.errors import ConfigError
from hil.config.thresholds import ThresholdProfile, load_thresholds, profile_path
from hil.paths import PROJECT_ROOT
from hil.scenarios.catalog import with_family_defaults
from hil.scenarios.contract import default_limits

pytestmark = pytest.mark.selftest

PAGES = sorted(
    [
        *(PROJECT_ROOT / "docs").glob("*.md"),
        PROJECT_ROOT / "firmware" / "README.md",
        *(PROJECT_ROOT / "firmware" / "docs").glob("*.md"),
    ]
)
MARKER = re.compile(r"<!--\s*(threshold|not a threshold):(.*?)-->", re.S)
TIE = re.compile(r'^\s*(\S+)\s+(\S+)\s+"([^"]+)"\s*$')
QUOTED = re.compile(r'"([^"]+)"')
CODE_SPAN = re.compile(r"`[^`\n]+`")
NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")
# what reads as a limit: a number after a comparison, a limit key with its value, "gated at N"
THRESHOLD_LIKE = re.compile(
    r"(?:(?:>=|<=|≥|≤)\s*"
    r"|\b(?:min|max)_[a-z0-9_]+:\s*"
    r"|\b(?:floor_pct|floor_abs|k_sd):\s*"
    r"|\b(?:gated|gates?|floors?|floored)\s+(?:sit\s+)?at\s+)"
    r"(?P<number>-?\d+(?:,\d{3})*(?:\.\d+)?)"
)


@dataclass(frozen=True)
class Figure:
    line: int
    start: int
    end: int
    text: str


def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def scope(text: str, pos: int) -> tuple[int, int]:
    """Where a comment's figures are: from its end to the end of its paragraph (a blank line)."""
    blank = re.compile(r"\n[ \t]*\n").search(text, pos)
    return pos, blank.start() if blank else len(text)


def find(figure: str, text: str, start: int, end: int) -> re.Match[str] | None:
    """The figure as written, whitespace free, not part of a longer number."""
    body = r"\s+".join(re.escape(w) for w in figure.split())
    before = r"(?<![\d.])" if figure[0].isdigit() else ""
    after = r"(?!\.?\d)" if figure[-1].isdigit() else ""
    return re.compile(before + body + after).search(text, start, end)


def shown(figure: str) -> tuple[float, int] | None:
    """The figure's last number and its decimals."""
    numbers = NUMBER.findall(figure)
    if not numbers:
        return None
    number = numbers[-1].replace(",", "")
    return float(number), len(number.partition(".")[2])


@cache
def profile(name: str) -> ThresholdProfile:
    return with_family_defaults(load_thresholds(profile_path(name)))


def file_value(source: str, path: str) -> float | None:
    """The limit a tie names, as the file gives it (None when it sets none); ConfigError or
    KeyError when the file, scenario, case or entry does not exist."""
    if source == "family-default":
        where, _, key = path.rpartition(".")
        scenario, _, case = where.partition("/")
        cases = default_limits()[scenario]
        return (cases.get(case) or cases["default"]).get(key)
    if not profile_path(source).exists():
        raise KeyError(f"no threshold file thresholds/{source}.yaml")
    prof = profile(source)
    if path == "link_mbit":
        return prof.link_mbit
    section, _, rest = path.partition(".")
    if section in ("trends", "regression"):
        name, _, key = rest.partition(".")
        entries = prof.trends if section == "trends" else prof.regression
        return getattr(entries[name], key)
    where, _, key = path.rpartition(".")
    scenario, _, case = where.partition("/")
    if not case:
        raise KeyError(f"{path}: a scenario's limit is SCENARIO/CASE.KEY")
    return prof.limits(scenario, case).model_dump().get(key)


def check_page(page: Path, text: str) -> tuple[list[str], list[Figure]]:
    """The tie problems of a page (a figure not found after its comment, a file that says
    otherwise, a tie that names nothing) and every figure its comments account for."""
    problems: list[str] = []
    figures: list[Figure] = []
    spans = [c.span() for c in CODE_SPAN.finditer(text)]
    for m in MARKER.finditer(text):
        if any(a < m.start() < b for a, b in spans):
            continue  # the convention shown as code, not a tie
        kind, body = m.group(1), m.group(2)
        where = f"{page.name}:{line_of(text, m.start())}"
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[text.rfind("\n", 0, max(line_start - 1, 0)) + 1 : line_start].strip()
        after = text[m.end() : text.find("\n", m.end()) if "\n" in text[m.end() :] else len(text)]
        fence = text[m.end() :].lstrip(" \n").startswith(("```", "~~~"))
        if not text[line_start : m.start()].strip() and (after.strip() or (before and not fence)):
            # Markdown reads a line that starts with a comment as an HTML block: it ends the paragraph
            # before it and takes the rest of its line as raw HTML
            problems.append(f"{where}: a comment that starts a line splits its paragraph: put it inside the sentence")
        start, end = scope(text, m.end())
        if kind == "not a threshold":
            wanted = [(None, None, f) for f in QUOTED.findall(body)]
            if not wanted:
                problems.append(f'{where}: `not a threshold:` names no "FIGURE"')
        else:
            wanted = []
            for part in body.split(";"):
                tie = TIE.match(part)
                if tie is None:
                    problems.append(f'{where}: {part.strip()!r} is not PROFILE PATH "FIGURE"')
                else:
                    wanted.append((tie.group(1), tie.group(2), tie.group(3)))
        for source, path, figure in wanted:
            found = find(figure, text, start, end)
            if found is None:
                problems.append(f"{where}: {figure!r} is not in the text after the comment (its paragraph)")
                continue
            start = found.start()  # the next figure is at or after this one (several files may share one)
            figures.append(Figure(line_of(text, found.start()), found.start(), found.end(), figure))
            if source is None:
                continue
            number = shown(figure)
            if number is None:
                problems.append(f"{where}: {figure!r} holds no number")
                continue
            try:
                value = file_value(source, path)
            except (ConfigError, KeyError, AttributeError) as e:
                problems.append(f"{where}: {source} {path}: {e}")
                continue
            if value is None:
                problems.append(f"{where}: {source} {path}: the file sets no such limit (the page shows {figure!r})")
            elif abs(number[0] - value) > 0.5 * 10 ** -number[1] + 1e-9:
                problems.append(f"{where}: the page shows {figure!r}; {source} {path} is {value:g}")
    return problems, figures


def untied(page: Path, text: str, figures: list[Figure]) -> list[str]:
    """Threshold-like figures no comment accounts for."""
    bare = MARKER.sub(lambda m: " " * len(m.group(0)), text)
    out = []
    for m in THRESHOLD_LIKE.finditer(bare):
        pos = m.start("number")
        if not any(f.start <= pos < f.end for f in figures):
            line = " ".join(bare[bare.rfind("\n", 0, m.start()) + 1 : bare.find("\n", m.end())].split())
            out.append(f"{page.name}:{line_of(bare, m.start())}: {m.group(0)!r} ({line})")
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_every_tied_figure_is_its_files(page: Path) -> None:
    problems, _ = check_page(page, page.read_text())
    assert problems == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_every_threshold_like_figure_is_tied_or_said_not_to_be(page: Path) -> None:
    text = page.read_text()
    _, figures = check_page(page, text)
    assert untied(page, text, figures) == []


def test_drift_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# T\n\n"
        'Ok <!-- threshold: virtual-100m baseline/tcp-dut_tx.min_efficiency_pct ">= 90.0 %" --> >= 90.0 %,\n'
        'by direction <!-- threshold: virtual-100m baseline/tcp-dut_rx.max_ttr "TTR <= 1.064" --> TTR <= 1.064.\n\n'
        'Drifted <!-- threshold: virtual-100m baseline/tcp-dut_tx.min_efficiency_pct ">= 96.0 %" --> >= 96.0 %.\n\n'
        'Edited <!-- threshold: virtual-100m baseline/tcp-dut_tx.max_ttr "<= 1.11" --> <= 1.2.\n\n'
        'Unset <!-- threshold: virtual-100m baseline/tcp-dut_tx.min_mbps ">= 91.00" --> >= 91.00.\n\n'
        'A goal <!-- not a threshold: ">= 90 %" of trials --> >= 90 %; untied <= 0.5 %, `max_ttr: 1.2`.\n'
    )
    problems, figures = check_page(page, page.read_text())
    assert problems == [
        "page.md:6: the page shows '>= 96.0 %'; virtual-100m baseline/tcp-dut_tx.min_efficiency_pct is 90",
        "page.md:8: '<= 1.11' is not in the text after the comment (its paragraph)",
        "page.md:10: virtual-100m baseline/tcp-dut_tx.min_mbps: the file sets no such limit "
        "(the page shows '>= 91.00')",
    ]
    assert untied(page, page.read_text(), figures) == [
        "page.md:8: '<= 1.2' (Edited <= 1.2.)",
        "page.md:12: '<= 0.5' (A goal >= 90 %; untied <= 0.5 %, `max_ttr: 1.2`.)",
        "page.md:12: 'max_ttr: 1.2' (A goal >= 90 %; untied <= 0.5 %, `max_ttr: 1.2`.)",
    ]


def test_a_comment_that_would_split_its_paragraph_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# T\n\n"
        "A paragraph's TTR\n"
        '<!-- threshold: virtual-100m baseline/tcp-dut_tx.max_ttr "<= 1.11" -->\n'
        "<= 1.11 goes on.\n\n"
        '<!-- threshold: virtual-100m baseline/tcp-dut_tx.max_ttr "<= 1.11" --> TTR <= 1.11 as raw HTML.\n\n'
        'Before a block: <!-- threshold: virtual-100m baseline/udp-dut_tx.min_mbps "min_mbps: 88" -->\n'
        '<!-- threshold: virtual-100m baseline/udp-dut_tx.max_loss_pct "max_loss_pct: 0.5" -->\n'
        "```yaml\nudp-dut_tx: {min_mbps: 88, max_loss_pct: 0.5}\n```\n"
    )
    problems, _ = check_page(page, page.read_text())
    assert problems == [
        "page.md:4: a comment that starts a line splits its paragraph: put it inside the sentence",
        "page.md:7: a comment that starts a line splits its paragraph: put it inside the sentence",
    ]


def test_a_family_default_is_read_from_its_definition() -> None:
    assert file_value("family-default", "rfc2544/default.min_efficiency_pct") == 90
    assert file_value("family-default", "nagle/dut_rx-off.min_segments_per_write") == 0.7
    assert file_value("virtual-20m", "link_mbit") == 20
    assert file_value("virtual-100m", "regression.latency.floor_abs") == 0.2
