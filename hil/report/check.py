"""Checks a generated HTML report the way a reviewer reads it, in headless Chromium: the
overview, the run summary (the report's page and the sortable one), one case of every
scenario family and the metrics page must render without errors, request nothing outside the
report, and every case must show its number against its criterion. Screenshots of each page
are kept for a person to look at.

    python -m hil.report.check RESULTS_DIR [--screenshots DIR] [--docs-screenshots DIR]

--docs-screenshots: the run summary's page and a failed case's (when the run has one) are also
written as DIR/report-summary.png and DIR/report-failed-case.png, the images docs/report.md shows
(the test command refreshes them from a run with a planted defect: tests/suite/test_planted_defects.py).
"""

from __future__ import annotations

import argparse
import http.server
import json
import re
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hil.errors import BenchError
from hil.report.allure_results import HIL_EPIC, SUMMARY_FEATURE
from hil.report.browser import Browser

# a case's title must carry a number and a criterion ("median 94.61 Mbit/s ...; median 94.61 >= 93.00")
HAS_NUMBER = re.compile(r"\d")
HAS_CRITERION = re.compile(r">=|<=| MISSED|no criterion")
LOCAL_SCHEMES = ("data:", "blob:", "about:", "chrome-error:")
PAGE_TIMEOUT_S = 20.0
SETTLE_QUIET_S = 0.3  # no request started or finished for this long: the page is drawn
SETTLE_MAX_S = 10.0
# what the check opens before a screenshot (Allure 3.18's awesome report), as JavaScript lists of
# elements to click: the tree's top groups, the summary's table, a case's charts
_HEADERS = "document.querySelectorAll('[data-testid=test-result-attachment-header]')"
EXPAND_TREE = "document.querySelectorAll('[data-testid=tree-content] [data-testid=tree-section-title]')"
EXPAND_SUMMARY = f"[...{_HEADERS}].slice(0, 1)"
EXPAND_CHARTS = f"[...{_HEADERS}].filter(h => h.textContent.includes('image/png'))"
# the pages docs/report.md shows, by the check's page name: the file each is written to
DOCS_SHOTS = {"summary": "report-summary.png", "failed case": "report-failed-case.png"}


@dataclass(frozen=True)
class CaseEntry:
    id: str
    name: str
    status: str
    epic: str
    feature: str
    message: str
    has_chart: bool = False  # a PNG attachment (the last point of a group carries the group's chart)


def load_cases(report: Path) -> list[CaseEntry]:
    """Every test result of the generated report (its data/test-results/*.json)."""
    out = []
    for path in sorted((report / "data" / "test-results").glob("*.json")):
        d = json.loads(path.read_text())
        labels: dict[str, str] = {}
        for label in d.get("labels", []):
            labels.setdefault(label["name"], label.get("value", ""))
        error = d.get("error") or {}
        out.append(
            CaseEntry(
                d["id"],
                d.get("name", ""),
                d.get("status", "unknown"),
                labels.get("epic", ""),
                labels.get("feature", ""),
                str(error.get("message") or ""),
                "image/png" in path.read_text(),
            )
        )
    return out


def title_problems(cases: list[CaseEntry]) -> list[str]:
    """HIL cases whose title lacks its number or its criterion: a passed case must show both, a
    failed or broken one both or its error message."""
    out = []
    for c in cases:
        if not c.epic.startswith(HIL_EPIC):
            continue
        shows = bool(HAS_NUMBER.search(c.name.split(":", 1)[-1]) and HAS_CRITERION.search(c.name))
        if c.status == "passed" and not shows:
            out.append(f"case {c.name!r} passed without a number and criterion in its title")
        elif c.status in ("failed", "broken") and not shows and not c.message:
            out.append(f"case {c.name!r} {c.status} with neither a number and criterion nor a message")
    return out


def pick_pages(cases: list[CaseEntry]) -> list[tuple[str, CaseEntry]]:
    """The run summary (and the RFC 2544 tables' result when the run has one), the first failed
    case when there is one, and one case of every scenario family: the first of its feature that
    carries a chart, else its first."""
    runs = [c for c in cases if c.epic == SUMMARY_FEATURE]
    summary = [("summary", c) for c in runs if c.name.startswith("Run summary")][:1]
    summary += [("RFC 2544 result", c) for c in runs if c.name.startswith("RFC 2544")][:1]
    summary += [("failed case", c) for c in cases if c.status == "failed" and c.epic.startswith(HIL_EPIC)][:1]
    families: dict[str, CaseEntry] = {}
    for c in cases:
        better = c.feature not in families or (c.has_chart and not families[c.feature].has_chart)
        if c.epic.startswith(HIL_EPIC) and better:
            families[c.feature] = c
    return summary + list(families.items())


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """The report served on loopback (an ephemeral port) while the block runs; its base URL."""
    handler = lambda *a: _QuietHandler(*a, directory=str(directory))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="report-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "case"


def _js(text: str) -> str:
    return json.dumps(text)


class ReportCheck:
    def __init__(self, report: Path, shots: Path) -> None:
        self.report, self.shots = report, shots
        self.problems: list[str] = []
        self.taken: list[Path] = []
        self.named: dict[str, Path] = {}  # the screenshot of each page by its name

    def _page(
        self, b: Browser, base: str, name: str, url: str, must_show: list[str], expand: str | None = None
    ) -> None:
        """Opens a page, waits for every text of `must_show`, clicks the elements the JavaScript
        expression `expand` lists (tree groups, attachments), screenshots the page; any page
        error or request outside the report is a problem."""
        b.events.errors.clear()
        b.events.requests.clear()
        ready = " && ".join(f"document.body.innerText.includes({_js(t)})" for t in must_show) or "true"
        shown = b.open(url, f"document.body && {ready}", PAGE_TIMEOUT_S)
        if shown and expand:  # the header's button toggles an attachment; a tree title its group
            b.evaluate(f"[...{expand}].forEach(e => (e.querySelector('button') || e).click())")
        # attachments load and images decode; late requests and errors of the page's scripts come in
        if not b.settle(quiet_s=SETTLE_QUIET_S, max_s=SETTLE_MAX_S):
            self.problems.append(f"{name}: the page was still loading {SETTLE_MAX_S:g} s after it showed")
        shot = self.shots / f"{len(self.taken) + 1:02d}-{_slug(name)}.png"
        if name in DOCS_SHOTS:  # the docs' image: what a reviewer sees first, the window's height
            self.named[name] = self.shots / f"docs-{DOCS_SHOTS[name]}"
            b.screenshot(self.named[name])
        b.screenshot(shot, full_page=True)
        self.taken.append(shot)
        if not shown:
            text = b.text()
            missing = [t for t in must_show if t not in text]
            self.problems.append(f"{name}: page did not show {missing} within {PAGE_TIMEOUT_S:g} s ({shot.name})")
        for err in b.events.errors:
            self.problems.append(f"{name}: {err}")
        outside = [u for u in b.events.requests if not u.startswith(base) and not u.startswith(LOCAL_SCHEMES)]
        for u in dict.fromkeys(outside):
            self.problems.append(f"{name}: requested {u[:200]} outside the report")

    def run(self) -> list[str]:
        index = self.report / "index.html"
        if not index.exists():
            return [f"no report at {index}"]
        cases = load_cases(self.report)
        if not cases:
            return [f"{self.report}: the report holds no test results"]
        self.problems += title_problems(cases)
        pages = pick_pages(cases)
        if not any(name == "summary" for name, _ in pages) and any(c.epic.startswith("HIL") for c in cases):
            self.problems.append("the report has no run summary")
        self.shots.mkdir(parents=True, exist_ok=True)
        for old in self.shots.glob("*.png"):  # (the docs' copies too)
            old.unlink()
        with serve(self.report) as base, Browser(width=1400, height=1300) as b:
            status = "Passed" if any(c.status == "passed" for c in cases) else "Failed"  # (a run of failures)
            self._page(b, base, "overview", base + "index.html", ["HIL network performance", status], EXPAND_TREE)
            for name, case in pages:
                expand = EXPAND_SUMMARY if name in ("summary", "RFC 2544 result") else EXPAND_CHARTS
                self._page(b, base, name, f"{base}index.html#/{case.id}", [case.name[:60]], expand)
            if (self.report / "summary.html").exists():
                self._page(b, base, "summary, sortable page", base + "summary.html", ["Run summary", "criterion"])
                n_rows = b.evaluate("document.querySelectorAll('tbody tr').length")
                if not n_rows:
                    self.problems.append("summary.html: the table has no rows")
            if (self.report / "rfc2544.html").exists():
                self._page(b, base, "RFC 2544 tables", base + "rfc2544.html", ["RFC 2544 benchmark", "Throughput"])
                n_rows = b.evaluate("document.querySelectorAll('tbody tr').length")
                if not n_rows:
                    self.problems.append("rfc2544.html: the tables have no rows")
            if (self.report / "trends.html").exists():
                self._page(b, base, "trends", base + "trends.html", ["Trends, DUT", "runs"])
                if not b.evaluate("document.querySelectorAll('.case img').length"):
                    self.problems.append("trends.html: no case's chart")
            if (self.report / "widgets" / "metrics.json").exists():
                self._page(b, base, "metrics", base + "index.html#/metrics", ["Performance metrics"])
        return self.problems


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds: the server stops, the browser and its profile go


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGTERM, _terminate)
    ap = argparse.ArgumentParser(prog="python -m hil.report.check", description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="results directory holding report/ (e.g. results)")
    ap.add_argument("--screenshots", type=Path, default=None, help="where the PNGs go (default: RESULTS/report-check)")
    ap.add_argument("--docs-screenshots", type=Path, default=None, help="also write the docs' two images here")
    args = ap.parse_args(argv)
    shots = args.screenshots or args.results / "report-check"
    try:
        check = ReportCheck(args.results / "report", shots)
        problems = check.run()
    except (BenchError, OSError, ValueError) as exc:
        print(f"report check: {exc}", file=sys.stderr)
        return 1
    if args.docs_screenshots is not None and not problems:
        args.docs_screenshots.mkdir(parents=True, exist_ok=True)
        for page, name in DOCS_SHOTS.items():
            if page in check.named:
                shutil.copyfile(check.named[page], args.docs_screenshots / name)
                print(f"report check: {args.docs_screenshots / name} refreshed ({page})")
    taken = sorted(p for p in shots.glob("*.png") if not p.name.startswith("docs-")) if shots.exists() else []
    print(f"report check: {len(taken)} pages rendered, screenshots in {shots}")
    for p in problems:
        print(f"  PROBLEM: {p}")
    if problems:
        print(f"report check: {len(problems)} problems in {args.results / 'report'}")
        return 1
    print("report check: every page rendered, every case shows its number and criterion, no request left the report")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
