"""The report's RFC 2544 page (hil.report.rfc2544_page) from the family's records: the standard's
tables per direction and frame size, the searches' bounds, what limited a number, and an Allure
result that shows it; nothing when the run measured no RFC 2544 case."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from hil.report.rfc2544_page import PAGE, rfc2544_html, write_rfc2544_page
from hil.results.recorder import CaseRecord

pytestmark = pytest.mark.selftest


def _record(direction: str, size: int, ndr_fps: int, line_fps: int, **extra: object) -> CaseRecord:
    mbps = ndr_fps * size * 8 / 1e6
    rec = CaseRecord("rfc2544", f"{direction}-f{size}", "model<queue>", "Mbit/s", [mbps], mbps, mbps, mbps, 0.0,
                     line_fps * size * 8 / 1e6, 100 * ndr_fps / line_fps)  # fmt: skip
    rec.measured.update(ndr_fps=ndr_fps, pdr_fps=ndr_fps + 90, tester_fps=140_000)
    rec.extra.update(
        frame_bytes=size, theory_fps=line_fps, direction=direction, trials=5, trial_s=7.5,
        goals={"NDR": "NDR: loss ratio 0 %", "PDR": "PDR: loss ratio 0.5 %"},
        results={"NDR": {"status": "regular", "lower_mbps": mbps, "upper_mbps": mbps * 1.004},
                 "PDR": {"status": "regular", "lower_mbps": mbps * 1.004, "upper_mbps": None,
                         "conditional_mbps": mbps * 1.002}},
        latency=[{"share_pct": s, "fps": ndr_fps * s // 100, "min_us": 50.0, "p50_us": 70.0, "p90_us": 80.0,
                  "p99_us": 90.0, "max_us": 400.0, "loss_pct": 0.0} for s in (10, 50, 90, 100)],
        loss_curve=[{"share_pct": 100, "loss_pct": 86.5, "tester_short": True}, {"share_pct": 90, "loss_pct": 85.0}],
        b2b={"frames": 65, "buffer_frames": 33.0, "burst_fps": 148_810, "repeats": 3, "lossy_repeats": 0,
             "searched": [[37202, 1], [16, 0]], "status": "regular"},
        recovery={"status": "regular", "overload_fps": 22_000, "lost_in_overload": 900, "recovery_ms": 0.0},
        reset={"status": "regular", "reset_by": "the black box's reset: command", "frames_lost": 4000,
               "reset_ms": 200.1, "longest_gap_ms": 200.2},
        spacing=[{"test": "throughput", "even_gap_us": 50.0, "median_gap_us": 49.9, "p95_gap_us": 50.5,
                  "max_gap_us": 300.0, "clumped_pct": 0.1, "source": "capture at the DUT's port p0"}],
        durations="trials: latency 0.5 s (shorter than RFC 2544's)",
        **extra,
    )  # fmt: skip
    rec.verdict = "passed"
    return rec


def test_the_page_has_the_standards_tables_for_every_direction_and_frame_size(tmp_path: Path) -> None:
    records = [_record("downlink", 1518, 8_000, 8_127), _record("downlink", 64, 20_000, 148_810),
               _record("uplink", 64, 20_010, 148_810, tester_limited=True)]  # fmt: skip
    records.append(CaseRecord("baseline", "tcp-uplink", "x", "Mbit/s", [1.0], 1, 1, 1, 0, None, None))
    html = rfc2544_html(records, "RFC 2544 benchmark R, DUT model<queue>")
    assert html.count("<h2>") == 2 and html.index("<h2>downlink") < html.index("<h2>uplink")
    for heading in ("Throughput", "Latency at shares", "Frame loss rate", "Back-to-back", "System recovery",
                    "Spacing of the offered frames"):  # fmt: skip
        assert html.count(heading) == 2, heading
    assert html.index(">64<") < html.index(">1518<")  # frame sizes in order within a direction
    assert "148,810" in html and "140,000" in html and "20,000" in html  # line rate, ceiling, NDR
    assert "&ge;" in html  # a bound the search never found above (loss-free at its max load)
    assert "tester-limited" in html and "capture at the DUT&#x27;s port p0" in html
    assert "86.500 *" in html  # the tester fell short of the line rate in that loss trial
    assert "model&lt;queue&gt;" in html and "model<queue>" not in html  # escaped
    assert "tcp-uplink" not in html


def test_the_page_and_its_allure_result_are_written_only_for_an_rfc2544_run(tmp_path: Path) -> None:
    allure = tmp_path / "allure-results"
    other = CaseRecord("baseline", "tcp-uplink", "x", "Mbit/s", [1.0], 1, 1, 1, 0, None, None)
    assert write_rfc2544_page([other], tmp_path, "x", "R", allure, time.time()) is None
    assert not (tmp_path / PAGE).exists() and not allure.exists()
    failed = _record("uplink", 512, 11_000, 23_496)
    failed.verdict = "below threshold"
    page = write_rfc2544_page([_record("downlink", 512, 11_700, 23_496), failed], tmp_path, "dut", "R", allure, 0.0)
    assert page == tmp_path / PAGE and "RFC 2544 benchmark R, DUT dut" in page.read_text()
    (result,) = [json.loads(p.read_text()) for p in allure.glob("*-result.json")]
    assert result["status"] == "failed" and "1 below threshold" in result["name"]
    assert result["links"][0]["url"] == PAGE
    (att,) = result["attachments"]
    assert (allure / att["source"]).read_text() == page.read_text() and att["type"] == "text/html"
