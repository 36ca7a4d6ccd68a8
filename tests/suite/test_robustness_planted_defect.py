"""The robustness family can fail: the host firmware's `planted` build (firmware/CMakePresets.json
host-planted: ASan/UBSan, and one defect reachable from the wire that no other build has: a
frame's IPv4 total length copied into a 1500-byte buffer unchecked) must fail the class whose
frames reach the defect, as a DUT fault naming the sanitizer's report, with the replay command in
the message; the command's replay must fail the same way, and a class that does not reach the
defect must pass on the same build."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from tests.support.child_suite import allure_results, run_suite

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

REPLAY = re.compile(r"replay them: sudo \./suite replay (\S+) --bench (\S+) --dut-name (\S+) "
                    r"--robustness-build planted --robustness-rate (\d+)")  # fmt: skip


def test_the_planted_defect_fails_its_class_and_its_replay_as_a_dut_fault(tmp_path: Path) -> None:
    first = tmp_path / "classes"
    # idle only: every class runs in every state the DUT can take unless told (docs/robustness-states.md),
    # and the crash's proof is the same in each (22 cases, 131 s of the test command, for 2)
    proc = run_suite(first, "-m", "robustness", "--robustness-classes", "ipv4,udp", "--robustness-states", "idle",
                     "--robustness-build", "planted", "--profile", "quick", tests="tests/hil")  # fmt: skip
    out = proc.stdout
    assert proc.returncode == ExitCode.DUT_FAILED, out[-3000:]
    assert "robustness/ipv4: the DUT stopped" in out and "AddressSanitizer" in out, out[-3000:]
    results = allure_results(first)
    assert results["ipv4"]["status"] == "broken", results["ipv4"].get("statusDetails")  # a DUT fault, as a killed DUT
    assert results["udp"]["status"] == "passed", results["udp"].get("statusDetails")  # not a class that reaches it
    attachments = {a["name"] for a in results["ipv4"].get("attachments", [])}
    assert any(name.startswith("ipv4: the frames sent (pcap.gz") for name in attachments), attachments
    assert "the sanitizer's report" in attachments, attachments
    found = REPLAY.search(out)
    assert found is not None, out[-3000:]
    pcap, bench, dut, rate = found.groups()
    assert Path(pcap).resolve() == (first / "robustness" / "ipv4.pcap").resolve(), pcap
    replay = run_suite(tmp_path / "replay", "-m", "robustness", "--replay", pcap,
                       "--bench", bench, "--dut-name", dut, "--robustness-build", "planted", "--robustness-rate", rate,
                       "--profile", "quick", tests="tests/hil")  # fmt: skip
    assert replay.returncode == ExitCode.DUT_FAILED, replay.stdout[-3000:]
    assert "robustness/replay: the DUT stopped" in replay.stdout and "AddressSanitizer" in replay.stdout


def test_the_bridges_sanitizer_build_catches_the_defect_planted_in_its_receive_path(tmp_path: Path) -> None:
    """In the path the family flashes the bench file's configuration's sanitizer build (bridge ->
    bridge-asan); with the same defect planted in the bridge's receive path (bridge-planted), the
    class whose frames reach it stops the bridge under ASan, a DUT fault with the replay command."""
    where = tmp_path / "bridge"
    proc = run_suite(where, "-m", "robustness", "--bench", "bench/bridge.yaml", "--robustness-classes", "ipv4",
                     "--robustness-states", "idle", "--robustness-build", "bridge-planted", "--profile", "quick",
                     tests="tests/hil")  # fmt: skip
    out = proc.stdout
    assert proc.returncode == ExitCode.DUT_FAILED, out[-3000:]
    assert "robustness/ipv4: the DUT stopped" in out and "AddressSanitizer" in out, out[-3000:]
    assert "--bench bench/bridge.yaml --dut-name bridge-dut --robustness-build bridge-planted" in out, out[-3000:]
    ipv4 = allure_results(where)["ipv4"]
    assert ipv4["status"] == "broken", ipv4.get("statusDetails")
    assert "the sanitizer's report" in {a["name"] for a in ipv4.get("attachments", [])}
