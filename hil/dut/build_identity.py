"""Which build of the firmware a run measured, kept with every record and every run of the
history so that a change point is pinned to a build: the firmware's own version (the project's
firmware says `git describe --always --dirty` of its source; ESP-IDF's and Zephyr's consoles their
version), the digest of the files the suite wrote to the DUT, and the build configuration."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

DIGEST_CHARS = 12


def files_digest(paths: Sequence[Path]) -> str | None:
    """SHA-256 over the files, in order (the first DIGEST_CHARS hex digits); None for no files
    (a DUT the suite does not program) or a file gone."""
    if not paths:
        return None
    h = hashlib.sha256()
    try:
        for path in paths:
            with path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
    except OSError:
        return None
    return h.hexdigest()[:DIGEST_CHARS]


def build_identity(version: object, flashed: Sequence[Path], config: str | None) -> dict[str, str]:
    """The fields kept: `version` (what the firmware says it is), `build` (the digest of what was
    flashed), `config` (the build configuration); only those known."""
    out = {"version": str(version) if version not in (None, "") else "", "build": files_digest(flashed) or "",
           "config": config or ""}  # fmt: skip
    return {k: v for k, v in out.items() if v}


def commit_of(version: str) -> str | None:
    """The commit a `git describe --always --dirty --tags` version names: `v1.2-3-gabc1234-dirty`
    -> abc1234, `abc1234` -> abc1234; None when it names none (e.g. `unknown`, an IDF version)."""
    parts = [p for p in version.split("-") if p != "dirty"]
    for part in reversed(parts):
        sha = part[1:] if part.startswith("g") and len(part) > 7 else part
        if 7 <= len(sha) <= 40 and all(c in "0123456789abcdef" for c in sha):
            return sha
    return None
