"""The robustness family's service states can fail (docs/robustness-states.md): with the defects
the family found planted back into the host firmware (`--plant-defect`: the guards of the fixes
switched off; never active by default), each class in the state that meets its defect fails as
the DUT's, naming the state and what the next client or the DUT's figures suffered; the same
cases pass on the firmware as built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from tests.support.child_suite import allure_results, run_suite

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

PAIRS = "exhaust@tcp_server,forged@ping"
PLANTED = "hold_half_open=1,keep_silent_clients=1,evict_arp_for_syn=1,trust_ping_replies=1"


def _run(where: Path, *extra: str):  # type: ignore[no-untyped-def]
    return run_suite(where, "-m", "robustness", "--robustness-states", PAIRS, "--profile", "quick", *extra,
                     tests="tests/hil")  # fmt: skip


def test_the_service_defects_planted_fail_their_class_and_state_as_the_duts(tmp_path: Path) -> None:
    proc = _run(tmp_path / "planted", "--plant-defect", PLANTED)
    out = proc.stdout
    assert proc.returncode == ExitCode.DUT_FAILED, out[-3000:]
    results = allure_results(tmp_path / "planted")
    exhaust, forged = results["exhaust@tcp_server"], results["forged@ping"]
    assert exhaust["status"] == "failed", exhaust.get("statusDetails")
    said = exhaust["statusDetails"]["message"]
    assert "its TCP iperf server listening" in said and "not served" in said, said
    assert forged["status"] == "failed", forged.get("statusDetails")
    said = forged["statusDetails"]["message"]
    assert "forged replies were counted" in said and "pinging the PC" in said, said
    assert "replay" in said and "--robustness-states ping" in said, said
    assert "generator-limited" not in out and "bench fault" not in out.lower()


def test_the_same_cases_pass_on_the_firmware_as_built(tmp_path: Path) -> None:
    proc = _run(tmp_path / "as-built")
    assert proc.returncode == ExitCode.PASSED, proc.stdout[-3000:]
    results = allure_results(tmp_path / "as-built")
    assert results["exhaust@tcp_server"]["status"] == "passed", results["exhaust@tcp_server"].get("statusDetails")
    assert results["forged@ping"]["status"] == "passed", results["forged@ping"].get("statusDetails")
    # a record's traffic time is its 1-s TCP run, the class's frames and the real clients' tests after it
    for line in (tmp_path / "as-built" / "results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if "median" in rec:
            clients_s = sum(s["normal_s"] + s["delay_ms"] / 1000 for s in rec["extra"]["served"])
            assert rec["traffic_s"] >= clients_s + rec["extra"]["sender"]["elapsed_s"] + 0.9, rec["traffic_s"]


def test_a_bridge_whose_full_table_drops_unknown_addresses_fails_the_fdb_class(tmp_path: Path) -> None:
    """The bridge build with `fdb_never_moves` planted (a learned address never moves to another
    port until it ages out): the class overflows the table (the peer's entry evicted) and then sends
    frames from the peer's address on the PC's side, so the peer is learned there and stays there;
    the PC's traffic to the peer is lost, the DUT's failure. The unplanted bridge moves the peer back
    as soon as the peer answers, and passes the same class in the test command's bridge matrix
    (`--robustness-states fdb@idle`)."""
    where = tmp_path / "bridge"
    proc = run_suite(where, "-m", "robustness", "--bench", "bench/bridge.yaml", "--robustness-states", "fdb@idle",
                     "--profile", "quick", "--plant-defect", "fdb_never_moves=1", tests="tests/hil")  # fmt: skip
    assert proc.returncode == ExitCode.DUT_FAILED, proc.stdout[-3000:]
    fdb = allure_results(where)["fdb"]
    assert fdb["status"] in ("failed", "broken"), fdb.get("statusDetails")
    said = fdb["statusDetails"]["message"]
    assert "robustness/fdb" in said and "replay" in said, said
