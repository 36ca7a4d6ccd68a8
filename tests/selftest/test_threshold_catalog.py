"""The threshold check against what the scenarios record (hil.scenarios.catalog): every shipped
threshold file passes it, every case the registry makes for every bench file is a case id of its
scenario (the catalogue cannot drift from the families), pytest collects exactly those cases, and
each kind of mistake is one line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hil.config.errors import ConfigError
from hil.config.thresholds import Limits, ThresholdProfile, load_thresholds
from hil.dut.bench_file import load_bench
from hil.paths import PROJECT_ROOT
from hil.run_config import bench_facts
from hil.scenarios.catalog import check_thresholds, shape_of
from hil.scenarios.contract import collect, families, record_keys
from hil.scenarios.profiles import PROFILES

pytestmark = pytest.mark.selftest

THRESHOLD_FILES = sorted((PROJECT_ROOT / "thresholds").glob("*.yaml"))
BENCH_FILES = sorted((PROJECT_ROOT / "bench").glob("*.yaml"))


@pytest.mark.parametrize("path", THRESHOLD_FILES, ids=[p.stem for p in THRESHOLD_FILES])
def test_every_shipped_threshold_file_names_only_what_is_recorded(path: Path) -> None:
    check_thresholds(load_thresholds(path), path)


def _record_ids(bench: Path) -> list[tuple[str, str]]:
    """(scenario, case) of every record the cases of a bench file write, from the scenario
    registry (hil.scenarios.contract), in both profiles."""
    dut = load_bench(bench).duts[0]
    out = []
    for profile in PROFILES.values():
        facts = bench_facts(dut, profile)
        out += [key for found in collect(facts) if found.case.skip is None for key in record_keys(found.case, facts)]
    return out


@pytest.mark.parametrize("bench", BENCH_FILES, ids=[p.stem for p in BENCH_FILES])
def test_every_case_is_a_case_of_its_scenario(bench: Path) -> None:
    ids = _record_ids(bench)
    assert len(ids) >= 10, ids  # the matrix was made, not an empty list
    wrong = [f"{s}/{c}" for s, c in ids if (shape := shape_of(s)) is None or not shape.case_ok(c)]
    assert not wrong, wrong


def test_pytest_collects_the_registrys_cases() -> None:
    """The pytest layer lists exactly the registry's cases (fixtures/cases.py adds nothing, drops nothing)."""
    bench = PROJECT_ROOT / "bench" / "bridge.yaml"
    argv = [sys.executable, "-m", "pytest", "tests/hil", "--collect-only", "-q", "--profile", "full", "--bench",
            str(bench), "-p", "no:cacheprovider"]  # fmt: skip
    proc = subprocess.run(argv, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    collected = re.findall(r"\[([^\]]+)\]$", proc.stdout, flags=re.MULTILINE)
    registry = [found.case.id for found in collect(bench_facts(load_bench(bench).duts[0], PROFILES["full"]))]
    assert collected == registry


def test_every_familys_default_limits_name_what_it_records() -> None:
    for fam in families():
        for scenario, cases in getattr(fam, "default_limits", {}).items():
            shape = next(s for s in fam.shapes if s.matches(scenario))
            for case, bounds in cases.items():
                assert shape.case_ok(case), f"{fam.name}: {scenario}/{case}"
                for bound, metric, _ in Limits.model_validate(bounds).bounds():
                    assert metric in shape.metrics, f"{fam.name}: {scenario}/{case}: {bound}_{metric}"


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


def test_a_direction_entry_covers_every_case_that_goes_that_way() -> None:
    """`dut_tx` / `dut_rx` entries: between a case's own entry and the scenario's default."""
    profile = ThresholdProfile.model_validate({"profile": "p", "scenarios": {"window_pc": {
        "default": {"min_mbps": 80}, "dut_tx": {"min_mbps": 71}, "dut_tx-w4K": {"min_mbps": 20},
    }, "baseline": {"default": {"min_mbps": 89}, "dut_tx": {"min_mbps": 71}}}})  # fmt: skip
    assert profile.limits("window_pc", "dut_tx-w8K").min_mbps == 71
    assert profile.limits("window_pc", "dut_tx-w4K").min_mbps == 20  # its own entry first
    assert profile.limits("window_pc", "dut_rx-w8K").min_mbps == 80
    assert profile.limits("baseline", "tcp-dut_tx").min_mbps == 71
    assert profile.limits("baseline", "udp-dut_rx").min_mbps == 89
