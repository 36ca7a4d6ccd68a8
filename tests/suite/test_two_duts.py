"""Two DUTs in one test (bench/bridge-endpoint.yaml: the firmware bridge in the path, a second
DUT behind it ending the traffic), the test command's run of that topology: its baseline and ping
at 20 Mbit/s against its gate (thresholds/bridge-endpoint-20m.yaml), with the DUT behind killed in
the middle of the first case. That case fails as that DUT's, by name; the DUT is re-flashed (the
next case's page says so) and every other case passes its limits through both DUTs; every record
names the DUT behind and its build; nothing of either DUT is left behind (run_suite checks the
namespaces, both DUTs' programs and iperf). The whole matrix of the pair: `./suite main --bench
bench/bridge-endpoint.yaml`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.child_suite import allure_results, run_suite

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

BENCH = "bench/bridge-endpoint.yaml"
GATE = ("--link-mbit", "20", "--thresholds", "thresholds/bridge-endpoint-20m.yaml", "--confirm-misses")
PASSING = ("tcp-downlink", "udp-uplink", "udp-downlink", "latency")


def test_the_pair_meets_its_gate_and_the_dut_behind_killed_mid_case_fails_that_case_by_its_name(
    tmp_path: Path,
) -> None:
    proc = run_suite(
        tmp_path, "--bench", BENCH, *GATE, "-k", "baseline or (latency and not loaded_latency and not flood)",
        "--inject-dut-kill", "tcp-uplink@1@endpoint-dut", tests=("tests/hil", "-m", "baseline or latency"),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-3000:]
    results = allure_results(tmp_path)
    killed = results["tcp-uplink"]
    message = killed["statusDetails"]["message"]
    assert killed["status"] == "broken" and "DutError" in message, killed["statusDetails"]
    assert "DUT endpoint-dut (behind it) stopped during the case (exit code" in message, message
    assert "bridge-dut" not in message.split("stopped during the case")[0], message  # the right DUT, not the other
    took_s = (killed["stop"] - killed["start"]) / 1000  # the PC's client stopped within a poll of the dead DUT
    assert took_s < 12, f"the killed case took {took_s:.1f} s"
    assert {case: results[case]["status"] for case in PASSING} == dict.fromkeys(PASSING, "passed"), proc.stdout[-3000:]
    after = results["tcp-downlink"]
    assert "DUT endpoint-dut (behind) was down" in after.get("description", ""), after.get("description")
    assert {p["name"] for p in after["parameters"]} >= {"DUT", "DUT behind"}
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    measured = [r for r in records if "median" in r]
    assert len(measured) >= 5 and all(r["extra"]["dut_behind"]["name"] == "endpoint-dut" for r in measured)
    assert measured[0]["extra"]["dut_behind"].get("config") == "default", measured[0]["extra"]["dut_behind"]
    env = (tmp_path / "allure-results" / "environment.properties").read_text()
    assert "DUT_behind=endpoint-dut (kind virtual, 10.77.0.3)" in env, env
    assert "DUT endpoint-dut 10.77.0.3" in env, env  # the topology names both
