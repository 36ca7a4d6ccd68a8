"""`./suite doctor`'s checks that need neither root nor a bench: the line format, the clock, the
search for a secret in a build, the tester's calibration file, a missing ESP-IDF build, the
Wi-Fi secret (tests/suite/test_doctor.py runs the whole command on benches)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hil.config.sections import WifiConfig
from hil.doctor import board_checks, host
from hil.doctor.finding import ok, problem
from hil.dut.bench_file import load_bench
from hil.paths import PROJECT_ROOT

pytestmark = pytest.mark.selftest


def test_a_problem_is_one_line_with_its_fix() -> None:
    assert ok("iperf 3", "3.12").line() == "ok   iperf 3            3.12"
    line = problem("serial port", "/dev/ttyUSB0 does not exist", "plug the board in").line()
    assert line == "FAIL serial port        /dev/ttyUSB0 does not exist  -> plug the board in"
    assert "\n" not in line


@pytest.mark.parametrize(("clock", "bad"), [("tsc", False), ("kvm-clock", False), ("jiffies", True)])
def test_a_coarse_clock_is_a_problem(tmp_path: Path, clock: str, bad: bool) -> None:
    path = tmp_path / "current_clocksource"
    path.write_text(clock + "\n")
    finding = host.clock_source(path)
    assert finding.problem is bad and clock in finding.found


def test_a_secret_in_a_build_is_found_as_bytes_or_as_a_c_initialiser(tmp_path: Path) -> None:
    build = tmp_path / "build_esp32_default"
    (build / "generated").mkdir(parents=True)
    (build / "hil-fw.bin").write_bytes(b"\x00" * 64)
    assert board_checks.baked_into(b"hunter22", [build]) == []
    (build / "generated" / "credentials.h").write_text("#define PSK 0x68,0x75,0x6e,0x74,0x65,0x72,0x32,0x32\n")
    (build / "hil-fw.elf").write_bytes(b"\x7fELF...hunter22...")
    found = board_checks.baked_into(b"hunter22", [build])
    assert found == [build / "generated" / "credentials.h", build / "hil-fw.elf"]


def test_the_wifi_secret_unset_set_and_baked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wifi = WifiConfig(ssid="lab-ap", psk_env="HIL_TEST_DOCTOR_PSK")
    monkeypatch.delenv("HIL_TEST_DOCTOR_PSK", raising=False)
    [unset] = board_checks.wifi_secret(wifi, [])
    assert unset.problem and "HIL_TEST_DOCTOR_PSK is not set" in unset.found and "sudo -E" in (unset.fix or "")
    monkeypatch.setenv("HIL_TEST_DOCTOR_PSK", "correct-horse")
    [fine] = board_checks.wifi_secret(wifi, [tmp_path])
    assert not fine.problem and "correct-horse" not in fine.line()
    (tmp_path / "image.bin").write_bytes(b"..correct-horse..")
    found = board_checks.wifi_secret(wifi, [tmp_path])
    assert [f.problem for f in found] == [False, True] and "correct-horse" not in found[1].line()


def test_an_esp32_build_missing_without_esp_idf_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("IDF_PATH", raising=False)
    dut = load_bench(PROJECT_ROOT / "bench" / "esp32.yaml").duts[0]
    [finding] = board_checks.firmware(dut)
    assert finding.problem and "no ESP-IDF here" in finding.found and "first-board-esp32.md" in (finding.fix or "")


def test_the_tester_must_be_calibrated(tmp_path: Path) -> None:
    bench = tmp_path / "two-nic.yaml"
    ceilings = tmp_path / "ceilings.json"
    bench.write_text(
        "duts:\n  - name: d\n    kind: cabled_black_box\n    role: in_path\n"
        "    network: {pc_ip: 10.77.0.1, dut_ip: 10.77.0.2}\n    peer: {ip: 10.77.0.3, netns: hil-peer}\n"
        f"    tester: {{ceilings: {ceilings}}}\n    link: {{shaping: false}}\n    thresholds: same70-bridge\n"
    )
    dut = load_bench(bench).duts[0]
    [missing] = board_checks.tester(dut)
    assert missing.problem and "not calibrated yet" in missing.found and "calibrate-tester" in (missing.fix or "")
    ceilings.write_text('{"format": 1, "ceilings": {"64": {}, "1518": {}}}')
    [done] = board_checks.tester(dut)
    assert not done.problem and "64, 1518 B" in done.found
