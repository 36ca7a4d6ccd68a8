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


PAIR_BENCH = "bench/pair.yaml"  # DUT to DUT: the host firmware twice on one link
PAIR_GATE = ("--link-mbit", "20", "--thresholds", "thresholds/pair-20m.yaml", "--confirm-misses")


def test_two_duts_on_one_link_meet_their_gate_and_the_partner_killed_mid_case_fails_that_case_by_its_name(
    tmp_path: Path,
) -> None:
    """DUT to DUT (bench/pair.yaml, `partner:`): the baseline's traffic runs between the two DUTs'
    consoles at the link's theory (thresholds/pair-20m.yaml), each record names the partner and the
    way its traffic went; the partner killed 1 s into the first case fails that case as its own, by
    name, and is re-flashed for the next, which says so."""
    proc = run_suite(tmp_path, "--bench", PAIR_BENCH, *PAIR_GATE, "--inject-dut-kill", "tcp-dut_tx@1@host-b",
                     tests=("tests/hil", "-m", "baseline"))  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-3000:]
    results = allure_results(tmp_path)
    killed = results["tcp-dut_tx"]
    message = killed["statusDetails"]["message"]
    assert killed["status"] == "broken" and "DUT host-b (beside it) stopped during the case (exit code" in message
    assert "host-a" not in message.split("stopped during the case")[0], message  # the right DUT, not the other
    passing = ("tcp-dut_rx", "udp-dut_tx", "udp-dut_rx")
    assert {case: results[case]["status"] for case in passing} == dict.fromkeys(passing, "passed"), proc.stdout[-3000:]
    after = results["tcp-dut_rx"]
    assert "DUT host-b (beside) was down" in after.get("description", ""), after.get("description")
    assert {p["name"] for p in after["parameters"]} >= {"DUT", "DUT beside it"}
    story = next(label["value"] for label in after["labels"] if label["name"] == "story")
    assert story.endswith("(host-b -> host-a)"), story
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    measured = {r["case"]: r for r in records if "median" in r}
    assert set(measured) >= set(passing) and all(
        r["extra"]["dut_partner"]["name"] == "host-b" for r in measured.values()
    )
    assert measured["udp-dut_tx"]["extra"]["flow"] == "host-a -> host-b"
    assert measured["tcp-dut_rx"]["extra"]["flow"] == "host-b -> host-a"
    # the traffic went between the two DUTs, not through the PC: host-a's tap carried it (frames to
    # host-a: 2 s at 20 Mbit/s), the PC's interface none of it (its pings only)
    counters = measured["tcp-dut_rx"]["extra"]["wire"]["counters"]
    pc_bytes = counters["pc"].get("rx_bytes", 0) + counters["pc"].get("tx_bytes", 0)  # (its changes only)
    assert pc_bytes < 100_000 < 4_000_000 < counters["dut_tap"]["tx_bytes"], counters
    env = (tmp_path / "allure-results" / "environment.properties").read_text()
    assert "DUT_partner=host-b (kind virtual, 10.77.0.3)" in env, env
