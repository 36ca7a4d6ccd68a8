"""A Wi-Fi pair in one test (bench/wifi-pair.yaml): the host firmware as the SoftAP (`wifi ap`)
and again as its station (`wifi connect`), the air's management frames on the virtual link, the
baseline's traffic between the two DUTs' consoles at the link's theory (thresholds/pair-20m.yaml).
The SoftAP killed in the middle of the first case fails that case as its own, by name; it is
re-flashed for the next, whose station joins it again (its new start seen in its beacons). A
station with the wrong passphrase is refused as ESP-IDF refuses it (reason 15), by the DUT's name,
and neither passphrase reaches the output, the records or the report. A pair of stock consoles
(bench/wifi-pair-espressif.yaml: ESP-IDF's iperf example, its `ap` and `sta`) meets the same gate,
and the passphrase the example echoes and logs in the clear reaches nothing written. The whole
matrix of the pair: `./suite main --bench bench/wifi-pair.yaml` (and of the stock pair)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
import yaml

from hil.paths import PROJECT_ROOT
from tests.support.child_suite import allure_results, run_suite

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

BENCH = PROJECT_ROOT / "bench" / "wifi-pair.yaml"
STOCK_BENCH = PROJECT_ROOT / "bench" / "wifi-pair-espressif.yaml"
GATE = ("--link-mbit", "20", "--thresholds", "thresholds/pair-20m.yaml", "--confirm-misses")


def _everything_written(results: Path, out: str) -> str:
    texts = [out, *(p.read_text(errors="replace") for p in results.rglob("*") if p.is_file() and p.suffix in
                    {".txt", ".json", ".jsonl", ".log", ".properties"})]  # fmt: skip
    return "\n".join(texts)


def test_a_softap_and_its_station_meet_the_gate_and_the_softap_killed_mid_case_fails_that_case_by_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    psk = "pair-" + secrets.token_hex(8)
    monkeypatch.setenv("HIL_WIFI_PSK", psk)
    proc = run_suite(tmp_path, "--bench", str(BENCH), *GATE, "--inject-dut-kill", "tcp-dut_tx@1@ap-dut",
                     tests=("tests/hil", "-m", "baseline"))  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-3000:]
    results = allure_results(tmp_path)
    killed = results["tcp-dut_tx"]
    message = killed["statusDetails"]["message"]
    assert killed["status"] == "broken" and "DUT ap-dut (the run's DUT) stopped during the case (exit code" in message
    passing = ("tcp-dut_rx", "udp-dut_tx", "udp-dut_rx")
    assert {case: results[case]["status"] for case in passing} == dict.fromkeys(passing, "passed"), proc.stdout[-3000:]
    after = results["tcp-dut_rx"]
    assert "DUT was down (exit code -9); re-flashed" in after.get("description", ""), after.get("description")
    beside = next(p["value"] for p in after["parameters"] if p["name"] == "DUT beside it")
    assert "Wi-Fi hil-pair ch 6" in beside and "bssid 02:00:00:00:00:02" in beside, beside
    # the station lost its SoftAP (silent, or started again: a new ANonce in its beacons) and joined
    # the new one: its `wifi status` says so, and the case's page with it
    assert "joined 2 times, last lost: " in beside and ("7 NOT_ASSOCED" in beside or "200 BEACON_TIMEOUT" in beside)
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    measured = {r["case"]: r for r in records if "median" in r}
    assert set(measured) >= set(passing)
    for r in measured.values():
        assert r["extra"]["dut_partner"]["name"] == "sta-dut" and "wpa2" in r["extra"]["dut_partner"]["wifi"]
        link = r["extra"]["link"]
        assert link["wifi_mode"] == "softap" and link["wifi_ssid"] == "hil-pair", link
    assert measured["udp-dut_tx"]["extra"]["flow"] == "ap-dut -> sta-dut"
    assert measured["tcp-dut_rx"]["extra"]["flow"] == "sta-dut -> ap-dut"
    env = (tmp_path / "allure-results" / "environment.properties").read_text()
    assert "DUT_partner=sta-dut (kind virtual, 10.77.0.3)" in env, env
    written = _everything_written(tmp_path, proc.stdout + proc.stderr)
    assert psk not in written and psk.encode().hex() not in written


def test_a_station_with_the_wrong_passphrase_is_refused_as_esp_idf_refuses_it_by_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = yaml.safe_load(BENCH.read_text())
    station = bench["duts"][1]["wifi"]
    station.update(psk_env="HIL_WIFI_STATION_PSK", connect_attempts=1, connect_timeout_s=3)
    path = tmp_path / "wrong-psk.yaml"
    path.write_text(yaml.safe_dump(bench))
    right, wrong = "pair-" + secrets.token_hex(8), "pair-" + secrets.token_hex(8)
    monkeypatch.setenv("HIL_WIFI_PSK", right)
    monkeypatch.setenv("HIL_WIFI_STATION_PSK", wrong)
    results = tmp_path / "results"
    proc = run_suite(results, "--bench", str(path), *GATE, "-k", "tcp-dut_tx", tests=("tests/hil", "-m", "baseline"))
    assert proc.returncode == 1, proc.stdout[-3000:]
    case = allure_results(results)["tcp-dut_tx"]
    message = case["statusDetails"]["message"]
    assert case["status"] == "broken" and "DUT sta-dut (beside the run's DUT)" in message, message
    assert "could not join Wi-Fi 'hil-pair'" in message and "15 (4WAY_HANDSHAKE_TIMEOUT)" in message, message
    written = _everything_written(results, proc.stdout + proc.stderr)
    for psk in (right, wrong):
        assert psk not in written and psk.encode().hex() not in written


def test_a_pair_of_stock_consoles_meets_the_gate_and_the_echoed_passphrase_is_written_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ESP-IDF's iperf example on both DUTs: `ap <ssid> <pass>` starts the SoftAP at its fixed
    192.168.4.1 (it logs `AP mode, <ssid> <pass>`), `sta <ssid> <pass>` joins it (the shell echoes
    the line): TCP from the SoftAP to its station at the link's theory, and the passphrase in
    neither form in pytest's output, the records, the Allure results (their captured stdout
    among them) or the console logs."""
    psk = "pair-" + secrets.token_hex(8)
    monkeypatch.setenv("HIL_WIFI_PSK", psk)
    proc = run_suite(tmp_path, "--bench", str(STOCK_BENCH), *GATE, "-k", "tcp-dut_tx",
                     tests=("tests/hil", "-m", "baseline"))  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:]
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    (tcp,) = [r for r in records if r.get("case") == "tcp-dut_tx" and "median" in r]
    assert tcp["efficiency_pct"] >= 95 and tcp["extra"]["flow"] == "ap-esp -> sta-esp", tcp
    assert tcp["extra"]["link"] == {"wifi_mode": "softap", "wifi_ssid": "hil-esp-pair", "wifi_auth": "wpa2"}
    console = "\n".join(p.read_text(errors="replace") for p in tmp_path.rglob("*.txt"))
    assert "AP mode, hil-esp-pair <psk hidden>" in console and "sta hil-esp-pair <psk hidden>" in console
    written = _everything_written(tmp_path, proc.stdout + proc.stderr)
    assert psk not in written and psk.encode().hex() not in written
