"""The threshold check against what the scenarios record (hil.scenarios.catalog): every shipped
threshold file passes it, every case the suite collects on every bench file is a case id of its
scenario (the catalogue cannot drift from the tests), and each kind of mistake is one line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hil.config.errors import ConfigError
from hil.config.thresholds import ThresholdProfile, load_thresholds
from hil.paths import PROJECT_ROOT
from hil.scenarios.catalog import check_thresholds, shape_of

pytestmark = pytest.mark.selftest

THRESHOLD_FILES = sorted((PROJECT_ROOT / "thresholds").glob("*.yaml"))
BENCH_FILES = sorted((PROJECT_ROOT / "bench").glob("*.yaml"))


@pytest.mark.parametrize("path", THRESHOLD_FILES, ids=[p.stem for p in THRESHOLD_FILES])
def test_every_shipped_threshold_file_names_only_what_is_recorded(path: Path) -> None:
    check_thresholds(load_thresholds(path), path)


def _collected_record_ids(bench: Path) -> list[tuple[str, str]]:
    """(scenario, case) of every record the collected cases of a bench file write."""
    argv = [sys.executable, "-m", "pytest", "tests/hil", "--collect-only", "-q", "--profile", "full", "--bench",
            str(bench), "-p", "no:cacheprovider"]  # fmt: skip
    proc = subprocess.run(argv, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = []
    for found in re.findall(r"\[([^\]]+)\]$", proc.stdout, flags=re.MULTILINE):
        # esp32's matrix runs once per build: <target>-<config> before or after the case (config_id)
        param = re.sub(r"^esp32[a-z0-9]*-[a-z0-9_]+-(?=[a-z_]+/)", "", found)
        if param in ("patient-monitoring", "stress"):  # the stream profiles: scenario stress-<profile>
            out.append((f"stress-{param}", "all"))
            continue
        if "/" not in param:
            continue  # a build configuration's id (esp32's per-config matrix)
        scenario, case = param.split("/", 1)
        case = re.sub(r"-esp32[a-z0-9]*-[a-z0-9_]+$", "", case)
        if scenario == "bidir":  # one case, a record each way
            out += [(scenario, f"{case}-{d}") for d in ("dut_tx", "dut_rx", "uplink", "downlink")]
        else:
            out.append((scenario, case))
    return out


@pytest.mark.parametrize("bench", BENCH_FILES, ids=[p.stem for p in BENCH_FILES])
def test_every_collected_case_is_a_case_of_its_scenario(bench: Path) -> None:
    ids = _collected_record_ids(bench)
    assert len(ids) >= 10, ids  # the matrix was collected, not an empty list
    wrong = [f"{s}/{c}" for s, c in ids if (shape := shape_of(s)) is None or not shape.case_ok(c)]
    assert not wrong, wrong


BASE = {"profile": "p", "scenarios": {"baseline": {"tcp-dut_tx": {"min_mbps": 91}}}}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"scenarios": {"baseline": {"tcp-dut_tx": {"min_mbsp": 9}}}}, "tcp-dut_tx.min_mbsp: baseline records no"),
        ({"scenarios": {"latency": {"default": {"min_mbps": 9}}}}, "latency records no metric 'mbps'"),
        ({"scenarios": {"baseline": {"tcp-dut_xt": {"min_mbps": 9}}}}, "no case of baseline is called 'tcp-dut_xt'"),
        ({"scenarios": {"baselin": {"default": {"min_mbps": 9}}}}, "scenarios.baselin: unknown scenario"),
        ({"trends": {"baseline": {"min_gain_pct": 1, "max_drop_pct": 1}}}, "trends.baseline: only a ladder"),
        ({"regression": {"flod": {"floor_pct": 3}}}, "regression.flod: unknown scenario"),
        ({"regression": {"latency": {"floor_pct": 3, "metrics": ["mbps"]}}}, "'mbps' is recorded by no case"),
    ],
    ids=["metric", "metric-of-another-kind", "case", "scenario", "trend", "regression", "regression-metric"],
)
def test_a_name_no_scenario_records_is_one_line(change: dict, expected: str) -> None:  # type: ignore[type-arg]
    profile = ThresholdProfile.model_validate(BASE | change)
    with pytest.raises(ConfigError, match=re.escape(expected)) as err:
        check_thresholds(profile, Path("t.yaml"))
    assert str(err.value).startswith("t.yaml: ") and "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ({"min_mbps": 95, "max_mbps": 90}, "min_mbps 95 is above max_mbps 90"),
        ({"max_jitter_ms": -1}, "max_jitter_ms: a limit cannot be negative"),
        ({"min_mbps": float("inf")}, "finite number"),
        ({"max_late": float("nan")}, "max_late: a limit must be a finite number"),
    ],
)
def test_limits_no_measurement_can_meet_are_refused(limits: dict, expected: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=re.escape(expected)):
        ThresholdProfile.model_validate({"profile": "p", "scenarios": {"baseline": {"tcp-dut_tx": limits}}})
