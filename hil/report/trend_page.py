"""The report's trend page: every headline metric of the DUT's recent runs with its groups of
steady runs (hil.report.trends), regressions and progressions first, a small chart each; as
`trends.html` and `trends.txt` beside the results (the report carries a copy) and as an Allure
result of its own, failed when a case regressed."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

from hil.report.allure_results import write_page_result
from hil.report.history import RunNumbers
from hil.report.trends import CLEAR_FACTOR, DEFAULT_RUNS, MIN_GROUP, MIN_RUNS, Trend, trend_text, trends
from hil.results.recorder import metric_unit
from hil.scenarios.charts import trend_chart

PAGE = "trends.html"
TEXT = "trends.txt"
FEATURE = "Trends over the runs"
COLORS = {"regression": "tab:red", "progression": "tab:green", "steady": "tab:blue"}

_STYLE = """
body { font: 12px/1.35 system-ui, sans-serif; margin: 8px; color: #222; }
h1 { font-size: 16px; margin: 0 0 4px; } p { margin: 0 0 6px; color: #444; }
.case { display: inline-block; margin: 4px 6px 8px 0; vertical-align: top; width: 420px; }
.case p { font-size: 11px; margin: 0; } .regression { color: #b00; font-weight: bold; }
.progression { color: #17702f; font-weight: bold; } .steady { color: #555; }
img { width: 416px; }
"""


def headline(found: Sequence[Trend], runs: int) -> str:
    worse = sum(t.verdict == "regression" for t in found)
    better = sum(t.verdict == "progression" for t in found)
    return (f"{len(found)} case metrics over the last {runs} runs: {worse} regressed, {better} progressed, "
            f"{len(found) - worse - better} steady")  # fmt: skip


def trends_html(found: Sequence[Trend], title: str) -> str:
    order = sorted(found, key=lambda t: ({"regression": 0, "progression": 1}.get(t.verdict, 2), t.key))
    cases = []
    for t in order:
        metric = t.key.rsplit("/", 1)[-1]
        png = trend_chart(t.key, t.values, [(g.start, g.stop, g.mean) for g in t.groups], metric_unit(metric),
                          t.since, COLORS[t.verdict], t.build)  # fmt: skip
        cases.append(
            f'<div class="case"><img alt="{html.escape(t.key)}" src="data:image/png;base64,'
            f'{base64.b64encode(png).decode()}"><p class="{t.verdict}">{html.escape(t.line())}</p></div>'
        )
    how = (f"Each case metric's newest runs (at most {DEFAULT_RUNS}, at least {MIN_RUNS}) split into groups of steady "
           "values by FD.io CSIT's jumpavg (minimum description length, each run weighed by its repetitions; "
           "the noise is the history's, not one run's); the newest group against the one before (a step) and "
           "the best one before (a drift): a change when it differs by the metric's relevant difference or more "
           f"once the group has {MIN_GROUP} run(s), by {CLEAR_FACTOR:g} times that with one. A dashed line marks "
           "where a change "
           "began, with the build (firmware version and image digest) it began with.")  # fmt: skip
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1><p>{how}</p>{''.join(cases)}</body></html>"
    )


def write_trend_page(
    history: Sequence[RunNumbers], out_dir: Path, dut: str, profile: str, allure_dir: Path | None, started: float,
    gate: bool = False,
) -> list[Trend]:  # fmt: skip
    """trends.txt (the verdicts) and, with at least one series long enough, trends.html and an
    Allure result showing it: failed when a case regressed and `gate` (--trend-gate on), else a
    regression leaves it skipped, saying so (a steady-state false alarm costs no CI run); returns
    the trends."""
    found = trends(history, dut, profile)
    (out_dir / TEXT).write_text(trend_text(found) + "\n")
    if not found:
        return found
    runs = len({r for t in found for r in t.runs})
    title = f"Trends, DUT {dut}, profile {profile}: {headline(found, runs)}"
    page = out_dir / PAGE
    page.write_text(trends_html(found, title))
    if allure_dir is None:
        return found
    regressed = [t for t in found if t.verdict == "regression" and t.gated]
    message = "; ".join(t.line() for t in regressed) or None
    if regressed and not gate:
        message = f"not gated (--trend-gate off; ./suite ci gates it unless --no-trend-gate): {message}"
    write_page_result(allure_dir, page, key="trend_page", title=title, shown_as="trends: every case metric",
                      link_name="trends", dut=dut, feature=FEATURE, started=started, failed=bool(regressed) and gate,
                      message=message, status="skipped" if regressed and not gate else None)  # fmt: skip
    return found
