"""The signal sweep on the virtual bench (bench/virtual-wifi-signal.yaml): the host firmware's
station follows the radio model of firmware/host/src/wifi_air.h, and the suite's sweep must
reproduce that model's curve (hil/radio_model.py, computed apart) within 3 % at every step both
ways, find the fall to zero at the model's attenuation, and get the station back after the signal
was lost under traffic. With a bad point planted in the radio (the rate halved at one step) the
sweep must fail naming it, as the DUT's failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT
from hil.radio_model import fall_to_zero_db, rssi_for
from tests.support.child_suite import allure_results, run_suite

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

BENCH = PROJECT_ROOT / "bench" / "virtual-wifi-signal.yaml"


def _bench(tmp_path: Path, bench: Path = BENCH, station: int = 0, **attenuator: object) -> Path:
    """A signal bench with a narrower sweep of its station's attenuator (the test command's time;
    `./suite main` sweeps 0-48 dB)."""
    data = yaml.safe_load(bench.read_text())
    data["duts"][station]["wifi"]["attenuator"].update(attenuator)
    path = tmp_path / f"signal-{bench.name}"
    path.write_text(yaml.safe_dump(data))
    return path


def _records(results: Path) -> list[dict]:
    return [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines() if line.strip()]


def _steps_follow_the_model(results: Path, stream: str) -> list[dict]:
    """The stream's steps at 28-40 dB within 3 % of the radio model, and none at the model's fall to
    zero: the measured steps."""
    mine = [r for r in _records(results) if r.get("scenario") == "signal" and "extra" in r]
    mine = [r for r in mine if r["case"].startswith(stream + "-")]
    measured = [r for r in mine if r["extra"]["associated"]]
    assert [r["extra"]["atten_db"] for r in measured] == [28, 32, 36, 40], mine
    for r in measured:
        assert r["theory"] and 97 <= r["efficiency_pct"] <= 103, (r["case"], r["median"], r["theory"])
    assert [r["extra"]["atten_db"] for r in mine if not r["extra"]["associated"]] == [fall_to_zero_db()], mine
    return measured


def test_the_sweep_follows_the_radio_model_both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIL_WIFI_PSK", "signal sweep test")
    bench = _bench(tmp_path, min_db=28, max_db=48, step_db=4)  # MCS 4, 3, 2, 0, then no association
    where = tmp_path / "run"
    proc = run_suite(where, "-m", "signal", "-k", "udp-dut_tx or tcp-dut_rx or reassociate", "--bench", str(bench),
                     "--profile", "quick", tests="tests/hil", timeout=400)  # fmt: skip
    assert proc.returncode == ExitCode.PASSED, proc.stdout[-3000:]
    for stream in ("udp-dut_tx", "tcp-dut_rx"):
        for r in _steps_follow_the_model(where, stream):
            assert r["measured"]["rssi_dbm"] == rssi_for(r["extra"]["atten_db"]), r["case"]
    results = allure_results(where)
    assert "falls to zero at 44 dB" in results["udp-dut_tx"]["name"], results["udp-dut_tx"]["name"]
    charts = [a["name"] for a in results["tcp-dut_rx"]["attachments"]]
    assert "signal tcp-dut_rx: goodput vs RSSI and attenuation" in charts, charts
    rejoin = next(r for r in _records(where) if r.get("scenario") == "reassociate" and "measured" in r)
    assert rejoin["measured"]["reassociate_ms"] < 1000, rejoin


def test_a_bad_point_planted_in_the_radio_fails_the_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIL_WIFI_PSK", "signal sweep test")
    bench = _bench(tmp_path, min_db=24, max_db=28, step_db=4, planted_bad_point_db=28)
    where = tmp_path / "planted"
    proc = run_suite(where, "-m", "signal", "-k", "udp-dut_tx", "--bench", str(bench), "--profile", "quick",
                     tests="tests/hil", timeout=300)  # fmt: skip
    assert proc.returncode == ExitCode.DUT_FAILED, proc.stdout[-3000:]
    message = allure_results(where)["udp-dut_tx"]["statusDetails"]["message"]
    assert "BAD POINT: udp-dut_tx at 28 dB (-68 dBm)" in message, message
    assert "GENERATOR" not in message and "BENCH FAULT" not in message, message


PAIR_BENCH = PROJECT_ROOT / "bench" / "wifi-pair-signal.yaml"


def test_a_wifi_pair_floods_either_way_and_keeps_its_association(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Wi-Fi pair (bench/wifi-pair-signal.yaml), UDP at 65 Mbit/s into an air of 5.6-24 Mbit/s
    (28-40 dB) both ways: the SoftAP (the run's DUT) to its station, and the station to the SoftAP.
    The SoftAP's beacons leave its queue ahead of its data and take the air between the station's
    own frames (firmware/host/src/air_queue.h), so the station keeps its association and every step
    carries the model's goodput; at 44 dB it has none. (Before: the station lost the SoftAP at 40 dB
    under the SoftAP's flood, BEACON_TIMEOUT, and under its own it got 67-80 % of the model.)"""
    monkeypatch.setenv("HIL_WIFI_PSK", "signal sweep pair")
    bench = _bench(tmp_path, PAIR_BENCH, 1, min_db=28, max_db=48, step_db=4)  # the floors ask for -70 dBm
    where = tmp_path / "pair"
    proc = run_suite(where, "-m", "signal", "-k", "udp-dut_tx or udp-dut_rx", "--bench", str(bench),
                     "--profile", "quick", tests="tests/hil", timeout=300)  # fmt: skip
    assert proc.returncode == ExitCode.PASSED, proc.stdout[-3000:]
    for stream in ("udp-dut_tx", "udp-dut_rx"):
        for r in _steps_follow_the_model(where, stream):
            assert r["extra"]["radio_of"] == "sta-dut" and r["extra"]["sender"] == "dut", r["extra"]
            assert "rejoined" not in r["extra"], r["extra"]
