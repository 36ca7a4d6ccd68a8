"""One check's answer: what was checked, what was found, and, when it is a problem, the fix."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    check: str  # what was checked, e.g. "serial port"
    found: str  # what was found, one line
    fix: str | None = None  # None: nothing to fix; else what the user does about it

    @property
    def problem(self) -> bool:
        return self.fix is not None

    def line(self) -> str:
        mark = "FAIL" if self.problem else "ok  "
        text = f"{mark} {self.check:<18} {self.found}"
        return f"{text}  -> {self.fix}" if self.fix else text


def ok(check: str, found: str) -> Finding:
    return Finding(check, found)


def problem(check: str, found: str, fix: str) -> Finding:
    return Finding(check, found, fix)
