"""Charts drawn beside the run (hil.report.background_charts), in a child pytest run with
allure-pytest and the suite's plugins: the case's result names the chart at once, the PNG is in
the results when the run ends, drawn by a helper in a session of its own at the lowest CPU
class; a chart that cannot be drawn is a suite error naming it and its case; an interrupted run
leaves no helper behind; a run without Allure starts none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT
from tests.support.processes import pgrep

pytestmark = pytest.mark.selftest

CHILD = """
import os
import time
from pathlib import Path

from hil.report import background_charts
from hil.report.background_charts import attach_chart
from hil.scenarios.charts import sweep_chart


def _helper_facts() -> str:
    drawer = background_charts._running
    if drawer is None or drawer._helper is None:
        return "no helper"
    pid = drawer._helper.pid
    idle = os.sched_getscheduler(pid) == os.SCHED_IDLE
    group = Path(f"/proc/{pid}/autogroup").read_text().strip()
    return f"helper {pid} idle={idle} own_session={os.getsid(pid) == pid} {group}"


def test_a_sweep() -> None:
    attach_chart("goodput vs length", sweep_chart, "a sweep", "length (B)", {"dut_tx": [(64.0, 9.0), (1448.0, 18.0)]},
                 theory=[(64.0, 10.0), (1448.0, 19.0)])
    print(_helper_facts())
    BODY
"""


def _run(tmp_path: Path, body: str = "pass", *, allure: bool = True) -> tuple[subprocess.CompletedProcess[str], Path]:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["fixtures.exit_status", "fixtures.background_charts"]\n')
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_child.py").write_text(textwrap.dedent(CHILD).replace("BODY", body))
    results = tmp_path / "allure-results"
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s", "test_child.py"]
    argv += [f"--alluredir={results}"] if allure else ["-p", "no:allure_pytest"]
    env = os.environ | {"PYTHONPATH": str(PROJECT_ROOT), MARK: str(tmp_path)}
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    return proc, results


def _charts(results: Path) -> dict[str, Path]:
    (result,) = [json.loads(f.read_text()) for f in results.glob("*-result.json")]
    return {a["name"]: results / a["source"] for a in result.get("attachments", []) if a["type"] == "image/png"}


MARK = "HIL_SELFTEST_CHILD"  # in the child run's environment, so in its helper's: only its own are counted


def _helpers(tmp_path: Path) -> list[int]:
    """The chart helpers of the child run in `tmp_path` still running (not those of other runs beside it)."""
    mine = f"{MARK}={tmp_path}".encode()
    found = []
    for pid in map(int, pgrep("-f", "hil.report.chart_helper")):
        try:
            if mine in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.append(pid)
        except OSError:  # (ended meanwhile)
            continue
    return found


def test_the_chart_is_named_at_once_and_drawn_by_an_idle_helper_of_its_own(tmp_path: Path) -> None:
    proc, results = _run(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "idle=True own_session=True" in proc.stdout and "nice 19" in proc.stdout, proc.stdout[-2000:]
    png = _charts(results)["goodput vs length"].read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000, len(png)
    assert not list(results.glob("*.part")), "a chart's file half written"
    assert not _helpers(tmp_path)


def test_a_chart_that_cannot_be_drawn_is_a_suite_error_naming_it_and_its_case(tmp_path: Path) -> None:
    body = 'attach_chart("a broken chart", sweep_chart, "broken", "x", {"dut_tx": "not points"})'
    proc, results = _run(tmp_path, body)
    assert proc.returncode == int(ExitCode.SUITE_ERROR), proc.stdout[-3000:] + proc.stderr[-2000:]
    said = [line for line in proc.stderr.splitlines() if line.startswith("hil: SUITE ERROR")]
    assert len(said) == 1, proc.stderr[-3000:]
    assert "chart 'a broken chart' of test_child.py::test_a_sweep was not drawn" in said[0], said
    assert "Traceback" in proc.stderr and "sweep_chart" in proc.stderr, proc.stderr[-2000:]
    assert _charts(results)["goodput vs length"].read_bytes().startswith(b"\x89PNG")  # the others are drawn
    assert not _helpers(tmp_path)


def test_a_helper_killed_mid_run_is_said_for_each_chart_it_owed_and_each_asked_for_after(tmp_path: Path) -> None:
    body = (
        "import signal; os.kill(background_charts._running._helper.pid, signal.SIGKILL); time.sleep(0.5)\n"
        '    attach_chart("a later chart", sweep_chart, "later", "x", {"dut_tx": [(1.0, 2.0)]})'
    )
    started = time.monotonic()
    proc, _ = _run(tmp_path, body)
    assert proc.returncode == int(ExitCode.SUITE_ERROR), proc.stdout[-3000:] + proc.stderr[-2000:]
    for chart in ("goodput vs length", "a later chart"):  # the later one not waited for until the end's limit
        assert f"chart '{chart}' of test_child.py::test_a_sweep was not drawn" in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.count("the chart helper ended (exit code -9) before drawing it") == 2, proc.stderr[-2000:]
    assert time.monotonic() - started < 60


def test_an_interrupted_run_leaves_no_helper(tmp_path: Path) -> None:
    proc, _ = _run(tmp_path, "import signal; os.kill(os.getpid(), signal.SIGINT); time.sleep(5)")
    assert proc.returncode == int(ExitCode.INTERRUPTED), proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "SUITE ERROR" not in proc.stderr
    assert not _helpers(tmp_path)


def test_a_run_without_allure_draws_nothing(tmp_path: Path) -> None:
    proc, results = _run(tmp_path, allure=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "no helper" in proc.stdout and not results.exists()
