"""Console transcripts of stock test firmware (tests/support/transcripts/*.txt), each headed by `# `
lines saying where its lines come from: the published output formats, not the host firmware's
personalities."""

from __future__ import annotations

from pathlib import Path

from hil.console.dialects.text import clean

TRANSCRIPTS = Path(__file__).parent / "transcripts"


def transcript(name: str) -> list[str]:
    """A transcript's console lines without its leading comment lines."""
    lines = (TRANSCRIPTS / name).read_text().split("\n")
    while lines and lines[0].startswith("# "):
        lines.pop(0)
    return lines[:-1] if lines[-1:] == [""] else lines


def after(lines: list[str], command: str) -> list[str]:
    """The lines after the echoed command."""
    i = next(i for i, line in enumerate(lines) if clean(line).strip() == command)
    return lines[i + 1 :]
