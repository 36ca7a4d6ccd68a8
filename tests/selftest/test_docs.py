"""The docs a newcomer reads: README at most 200 lines linking every topic page of docs/, each page
with its own table of contents and at most 300 lines, every relative link (file and #anchor,
GitHub's heading slugs) resolving, from README, docs/ and the firmware's pages; every reference
to a page's section in words (`docs/benches.md "A DUT in the path"`, in the docs and in the bench
and threshold files' comments) naming a page and a heading that exist, and none left pointing at
README sections that moved; the terms a reader meets on any page (a bench fault, a dialect, a
DUT in the path, the thesis) linked to where they are defined where a page first uses them; the
references page names the five seed documents the code cites."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hil.paths import PROJECT_ROOT

pytestmark = pytest.mark.selftest

README = PROJECT_ROOT / "README.md"
PAGES = sorted((PROJECT_ROOT / "docs").glob("*.md"))
FIRMWARE_PAGES = [PROJECT_ROOT / "firmware" / "README.md", *sorted((PROJECT_ROOT / "firmware" / "docs").glob("*.md"))]
MAX_LINES = 300
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


@pytest.mark.parametrize(
    "page",
    [p for p in [*PAGES, *FIRMWARE_PAGES] if p.name != "exit-codes.md"],
    ids=lambda p: str(p.relative_to(PROJECT_ROOT)),
)
def test_each_page_has_its_table_of_contents(page: Path) -> None:
    text = page.read_text()
    sections = [slug(m.group(2)) for line in prose(text) if (m := HEADING.match(line)) and m.group(1) == "##"]
    toc = {t.partition("#")[2] for t in LINK.findall(text) if t.startswith("#")}
    assert sections and set(sections) <= toc, set(sections) - toc


def test_every_relative_link_resolves() -> None:
    assert broken_links([README, *PAGES, *FIRMWARE_PAGES]) == []


@pytest.mark.parametrize("page", [*PAGES, *FIRMWARE_PAGES], ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_no_page_passes_300_lines(page: Path) -> None:
    """A page longer than this is split by topic (each part with its own table of contents)."""
    assert len(page.read_text().splitlines()) <= MAX_LINES


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


# --- references to a page's section in words --------------------------------------------------

# `docs/benches.md "A DUT in the path"` (a comma between is fine): the page from the project's root
PAGE_REF = re.compile(r"""(?<![\w/.-])((?:docs|firmware)(?:/[\w.-]+)*\.md),?\s+"([^"]+)\"""")
# README's sections moved to docs/: a reference in words to one must name its page now
README_REFS = (
    re.compile(r"""(?<![\w/.-])README(?:\.md)?,?\s+(?:section\s+)?"([^"]+)\""""),
    re.compile(r"\((README)\)"),
    re.compile(r"(?<![\w/.-])README section\b(?!,?\s+\")()"),
)
REFERRING = sorted(
    [*(PROJECT_ROOT / "bench").glob("*.yaml"), *(PROJECT_ROOT / "thresholds").glob("*.yaml"), *PAGES, *FIRMWARE_PAGES]
)


def comments(text: str) -> str:
    """A YAML file's comments, one comment block a line of its own (a quoted heading may go on over
    two comment lines)."""
    out: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            out.append(stripped.lstrip("#").strip())
        else:
            out.append("\n")
            if " #" in line:
                out.append(line.split(" #", 1)[1].strip())
                out.append("\n")
    return " ".join(out)


def referring_text(path: Path) -> str:
    if path.suffix == ".yaml":
        return comments(path.read_text())
    return "\n".join(" ".join(block.split()) for block in "\n".join(prose(path.read_text())).split("\n\n"))


def bad_references(files: list[Path]) -> list[str]:
    bad = []
    for f in files:
        text = referring_text(f)
        for page, heading in PAGE_REF.findall(text):
            dest = PROJECT_ROOT / page
            if not dest.exists():
                bad.append(f'{f.name}: {page} "{heading}": no such page')
            elif slug(heading) not in anchors(dest):
                bad.append(f'{f.name}: {page} "{heading}": no such heading on it')
        for pattern in README_REFS:
            for m in pattern.finditer(text):
                heading = m.group(1)
                if not heading or heading == "README" or slug(heading) not in anchors(README):
                    bad.append(f'{f.name}: {m.group(0)!r}: name the page and its heading (docs/PAGE.md "Heading")')
    return bad


def test_every_reference_to_a_section_resolves() -> None:
    assert bad_references(REFERRING) == []


def test_a_stale_reference_is_found(tmp_path: Path) -> None:
    conf = tmp_path / "bench.yaml"
    conf.write_text(
        '# a peer over SSH (README, "A DUT in the path"); a template (README); see docs/benches.md\n'
        '# "A DUT in the path", docs/benches.md "No such heading" and docs/nowhere.md "Bench files"\n'
        'name: x   # README section "Bench files"\n'
    )
    assert bad_references([conf]) == [
        'bench.yaml: docs/benches.md "No such heading": no such heading on it',
        'bench.yaml: docs/nowhere.md "Bench files": no such page',
        'bench.yaml: \'README, "A DUT in the path"\': name the page and its heading (docs/PAGE.md "Heading")',
        'bench.yaml: \'README section "Bench files"\': name the page and its heading (docs/PAGE.md "Heading")',
        "bench.yaml: '(README)': name the page and its heading (docs/PAGE.md \"Heading\")",
    ]


# --- terms defined at first use ------------------------------------------------------------------

# a term, where it is defined, and the pages that do not define it by hand: verdicts.md is written
# by hil.bench_faults (tests/selftest/test_bench_faults.py), not edited here
TERMS = {
    "bench fault": (re.compile(r"\bbench faults?\b", re.I), PROJECT_ROOT / "docs" / "verdicts.md"),
    "dialect": (re.compile(r"\bdialects?\b", re.I), PROJECT_ROOT / "docs" / "stock-firmware.md"),
    "in the path": (re.compile(r"\bin the path\b", re.I), PROJECT_ROOT / "docs" / "benches.md"),
    "the thesis": (re.compile(r"\bthe thesis\b", re.I), PROJECT_ROOT / "docs" / "references.md"),
}
GENERATED = {PROJECT_ROOT / "docs" / "verdicts.md"}
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
TOC_LINE = re.compile(r"^\s*[-*]\s+\[[^\]]*\]\(#[^)]*\)\s*$")


def sentences(path: Path) -> list[str]:
    """The page's prose as sentences: paragraphs, list items and table rows split at a sentence's
    end; headings, tables of contents and HTML comments left out."""
    lines = prose(re.sub(r"<!--.*?-->", " ", path.read_text(), flags=re.S))
    blocks: list[list[str]] = [[]]
    for line in lines:
        if not line.strip() or HEADING.match(line) or TOC_LINE.match(line):
            blocks.append([])
            continue
        if re.match(r"^\s*(?:[-*]|\d+\.)\s|^\s*\|", line):
            blocks.append([])
        blocks[-1].append(line.strip())
    return [s for b in blocks if b for s in SENTENCE_END.split(" ".join(b))]


def undefined_terms(page: Path) -> list[str]:
    """Each term whose first use on the page is in a sentence without a link to its defining page."""
    bad = []
    found = sentences(page)
    for term, (pattern, home) in TERMS.items():
        if page == home or page in GENERATED:
            continue
        for sentence in found:
            plain = re.sub(r"`[^`]*`", " ", re.sub(r"\]\([^)]*\)", "]", sentence))
            if pattern.search(plain):
                targets = {(page.parent / t.partition("#")[0]).resolve() for t in LINK.findall(sentence)}
                if home.resolve() not in targets:
                    bad.append(f"{page.name}: {term!r} first in: {sentence[:140]}")
                break
    return bad


@pytest.mark.parametrize("page", [*PAGES, *FIRMWARE_PAGES], ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_terms_are_defined_where_a_page_first_uses_them(page: Path) -> None:
    assert undefined_terms(page) == []


def test_an_undefined_term_is_found(tmp_path: Path) -> None:
    (tmp_path / "references.md").write_text("# R\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# T\n\n- [A DUT in the path](#x)\n\nA `dialect: x` key. The thesis ([seed](references.md)) measured it.\n"
        "A DUT in the path forwards. The thesis again.\n"
    )
    saved = dict(TERMS)
    try:
        TERMS.clear()
        TERMS.update(
            {
                "in the path": (re.compile(r"\bin the path\b", re.I), tmp_path / "benches.md"),
                "the thesis": (re.compile(r"\bthe thesis\b", re.I), tmp_path / "references.md"),
                "dialect": (re.compile(r"\bdialects?\b", re.I), tmp_path / "stock.md"),
            }
        )
        assert undefined_terms(page) == ["page.md: 'in the path' first in: A DUT in the path forwards."]
    finally:
        TERMS.clear()
        TERMS.update(saved)
