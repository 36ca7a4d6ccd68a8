"""Finishes a generated HTML report so it opens from a file share with no internet: the
generator's analytics script taken out (Allure 3 writes it unconditionally), the run's
sortable summary, its CSV and the RFC 2544 tables put beside index.html (the summary result and the
RFC 2544 result link to them).

    python -m hil.report.finish RESULTS_DIR     (after `allure generate`; report-generator/generate.sh)
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

# Allure 3.18's awesome report: a gtag.js loader and its inline set-up script
_ANALYTICS = re.compile(
    r'<script async src="https://www\.googletagmanager\.com/[^"]*"></script>\s*<script>\s*window\.dataLayer.*?</script>',
    re.DOTALL,
)


class ReportError(RuntimeError):
    """The generated report is not what this step knows how to finish."""


def strip_analytics(index: Path) -> bool:
    """Removes the analytics script from the report's index.html; True when there was one. A
    reference to the analytics host left after that (a generator that changed its template) is
    an error: the report must not call out."""
    text = index.read_text()
    stripped, n = _ANALYTICS.subn("", text)
    if "googletagmanager" in stripped:
        raise ReportError(f"{index}: an analytics reference remains after stripping (generator template changed?)")
    if n:
        index.write_text(stripped)
    return n > 0


def finish(results: Path) -> list[str]:
    report = results / "report"
    index = report / "index.html"
    if not index.exists():
        raise ReportError(f"no {index}: generate the report first")
    done = []
    if strip_analytics(index):
        done.append("analytics script removed")
    for name in ("summary.html", "summary.csv", "rfc2544.html", "trends.html", "trends.txt"):
        if (results / name).exists():
            shutil.copy2(results / name, report / name)
            done.append(f"{name} added")
    return done


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m hil.report.finish RESULTS_DIR", file=sys.stderr)
        return 2
    try:
        done = finish(Path(argv[0]))
    except (ReportError, OSError) as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 1
    print(f"report finished: {', '.join(done) or 'nothing to do'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
