"""The docs a newcomer reads: README at most 200 lines linking every topic page of docs/, each page
with its own table of contents, and every relative link (file and #anchor, GitHub's heading
slugs) resolving; the references page names the five seed documents the code cites."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hil.paths import PROJECT_ROOT

pytestmark = pytest.mark.selftest

README = PROJECT_ROOT / "README.md"
PAGES = sorted((PROJECT_ROOT / "docs").glob("*.md"))
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose(text: str) -> list[str]:
    """The lines outside fenced code blocks (fenced lines blank, numbering kept)."""
    out, fence = [], False
    for line in text.splitlines():
        if re.match(r"^\s*(```|~~~)", line):
            fence = not fence
            out.append("")
            continue
        out.append("" if fence else line)
    return out


def slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", re.sub(r"`([^`]*)`", r"\1", heading.strip())).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in prose(path.read_text()):
        if m := HEADING.match(line):
            s = slug(m.group(2))
            found.add(s if s not in seen else f"{s}-{seen[s]}")
            seen[s] = seen.get(s, 0) + 1
    return found


def broken_links(files: list[Path]) -> list[str]:
    bad = []
    for f in files:
        for no, line in enumerate(prose(f.read_text()), 1):
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"^[a-z]+:", target):
                    continue
                path, _, anchor = target.partition("#")
                dest = (f.parent / path).resolve() if path else f
                if not dest.exists():
                    bad.append(f"{f.name}:{no}: {target}: no such file")
                elif anchor and (dest.suffix != ".md" or anchor not in anchors(dest)):
                    bad.append(f"{f.name}:{no}: {target}: no heading with that anchor")
    return bad


def test_readme_is_short_and_maps_every_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    assert "sudo ./suite main" in text and "sudo ./suite test" in text
    linked = {Path(t.partition("#")[0]).name for t in LINK.findall(text) if t.startswith("docs/")}
    assert {p.name for p in PAGES} <= linked, {p.name for p in PAGES} - linked


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "exit-codes.md"], ids=lambda p: p.stem)
def test_each_page_has_its_table_of_contents(page: Path) -> None:
    text = page.read_text()
    sections = [slug(m.group(2)) for line in prose(text) if (m := HEADING.match(line)) and m.group(1) == "##"]
    toc = {t.partition("#")[2] for t in LINK.findall(text) if t.startswith("#")}
    assert sections and set(sections) <= toc, set(sections) - toc


def test_every_relative_link_resolves() -> None:
    assert broken_links([README, *PAGES]) == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# T\n\n## Here\n\n[ok](#here) [gone](#there) [file](missing.md) `[code](nowhere.md)`\n")
    assert broken_links([page]) == [
        "page.md:5: #there: no heading with that anchor",
        "page.md:5: missing.md: no such file",
    ]


def test_the_references_page_names_every_seed_the_code_cites() -> None:
    anchors_there = anchors(PROJECT_ROOT / "docs" / "references.md")
    for n in ("000", "001", "002", "003", "004"):
        assert any(a.startswith(f"seed-{n}") for a in anchors_there), n
