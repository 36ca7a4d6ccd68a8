"""The history gate (--trend-gate on, what `./suite ci` runs with): three child runs of the UDP
cases into one results folder, as a CI job's history would hold them, with no baseline file. Runs
1 and 2 (the firmware as built) pass and make the bench's baseline; run 3 plants a 3 % step in the
DUT's UDP sender and 0.3 % silent receive loss (--plant-defect udp_rate_pct=97,rx_drop_ppm=3000):
small enough to pass the thresholds a team sets loosely (80 %, 1 % loss, written here), and each
at least CLEAR_FACTOR (2) times its metric's relevant change, so one run on the new level is a
regression (smaller changes wait for MIN_GROUP runs, docs/history.md): run 3 fails on both metrics
(exit 1), naming itself and the build it measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from tests.support.child_suite import run_suite
from tests.support.planted import RUN_ARGS

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

LOOSE = """profile: loose floors (the history gate's test)
scenarios:
  baseline:
    udp-dut_tx: {min_efficiency_pct: 80}
    udp-dut_rx: {min_efficiency_pct: 80, max_loss_pct: 1}
"""
STEP = "udp_rate_pct=97,rx_drop_ppm=3000"


def _run(results: Path, thresholds: Path, *extra: str) -> tuple[int, str]:
    proc = run_suite(results, *RUN_ARGS, "--thresholds", str(thresholds), "-m", "baseline", "-k", "udp",
                     "--repeat", "3", "--trend-gate", "on", *extra, tests="tests/hil", timeout=300)  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr


def test_a_three_percent_step_and_three_tenths_of_loss_fail_as_a_regression(tmp_path: Path) -> None:
    thresholds = tmp_path / "loose.yaml"
    thresholds.write_text(LOOSE)
    results = tmp_path / "results"
    for n in (1, 2):
        code, out = _run(results, thresholds)
        assert code == ExitCode.PASSED, f"unchanged run {n}: exit {code}\n{out[-3000:]}"
    code, out = _run(results, thresholds, "--plant-defect", STEP)
    assert code == ExitCode.DUT_FAILED, f"the stepped run: exit {code}\n{out[-3000:]}"
    trends = (results / "trends.txt").read_text()
    history = [json.loads(x) for x in (results / "history" / "metrics.jsonl").read_text().splitlines()]
    third = history[2]["run"]
    for key in ("baseline/udp-dut_tx/mbps", "baseline/udp-dut_rx/loss_pct"):
        line = next((x for x in trends.splitlines() if x.startswith(f"REGRESSION {key}:")), None)
        assert line is not None, f"{key} not flagged:\n{trends}"
        assert f"since run {third}, build " in line and f"planted: {STEP}" in line, line
    assert "regression against the history (--trend-gate on)" in out, out[-2000:]
    assert history[0]["firmware"]["build"] and history[0]["samples"]["baseline/udp-dut_tx/mbps"], history[0]
