"""`./suite doctor`: the virtual bench passes after set-up; a board on the desk (the firmware
running on the virtual link, its console on a pseudo-terminal as a USB-UART's, the PC's side in a
namespace: tests/support/desk_board.py) passes as a `preflashed` bench file; and each thing a
user gets wrong is one FAIL line with its fix, exit 4: the serial port missing, the port held by
another program, the PC port's address wrong, the Wi-Fi PSK unset, iperf 3 absent on the peer.
A bench of two DUTs is joined as a run joins it: each end reaches the other, and a station whose
passphrase is not its SoftAP's is one FAIL line naming the station and the reason."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT
from tests.support.desk_board import DeskBoard, desk_board

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]


def doctor(bench: Path, env: dict[str, str] | None = None) -> tuple[int, list[str], str]:
    """Exit code, the FAIL lines, and the whole output of `python -m hil.doctor --bench BENCH`."""
    out = subprocess.run([sys.executable, "-m", "hil.doctor", "--bench", str(bench)], cwd=PROJECT_ROOT,
                         capture_output=True, text=True, timeout=120, check=False, env=env)  # fmt: skip
    text = out.stdout + out.stderr
    return out.returncode, [line for line in text.splitlines() if line.startswith("FAIL")], text


@pytest.fixture(scope="module")
def board() -> Iterator[DeskBoard]:
    with desk_board() as b:
        yield b


def test_the_virtual_bench_passes() -> None:
    rc, fails, text = doctor(PROJECT_ROOT / "bench" / "virtual.yaml")
    assert rc == ExitCode.PASSED and not fails, text
    assert "ok   console" in text and "the bench can run" in text, text


def test_a_board_on_the_desk_passes(board: DeskBoard, tmp_path: Path) -> None:
    rc, fails, text = doctor(board.bench_file(tmp_path / "desk.yaml"))
    assert rc == ExitCode.PASSED and not fails, text
    for check in ("serial port", "port in use", "console", "PC port", "PC port link", "route to DUT"):
        assert f"ok   {check} " in text, (check, text)


def test_the_serial_port_missing_is_one_line(board: DeskBoard, tmp_path: Path) -> None:
    rc, fails, text = doctor(board.bench_file(tmp_path / "desk.yaml", port="/dev/ttyHIL-unplugged"))
    assert rc == ExitCode.USAGE_ERROR, text
    assert len(fails) == 1 and "serial port" in fails[0] and "/dev/ttyHIL-unplugged does not exist" in fails[0], text
    assert "-> plug the board in" in fails[0]


def test_a_port_another_program_holds_is_one_line(board: DeskBoard, tmp_path: Path) -> None:
    held = os.open(board.port, os.O_RDWR | os.O_NOCTTY)  # a terminal program left open
    try:
        rc, fails, text = doctor(board.bench_file(tmp_path / "desk.yaml"))
    finally:
        os.close(held)
    assert rc == ExitCode.USAGE_ERROR, text
    assert len(fails) == 1 and "port in use" in fails[0] and f"{os.getpid()} (" in fails[0], text


def test_the_pc_port_address_wrong_is_one_line(board: DeskBoard, tmp_path: Path) -> None:
    rc, fails, text = doctor(board.bench_file(tmp_path / "desk.yaml", pc_ip="10.77.0.9"))
    assert rc == ExitCode.USAGE_ERROR, text
    assert len(fails) == 1 and "PC port" in fails[0] and "holds pc_ip 10.77.0.9" in fails[0], text
    assert "ip addr add 10.77.0.9/24 dev" in fails[0]


def test_the_wifi_psk_unset_is_one_line_and_a_set_one_is_never_printed() -> None:
    bench = PROJECT_ROOT / "bench" / "virtual-wifi.yaml"
    env = {k: v for k, v in os.environ.items() if k != "HIL_WIFI_PSK"}
    rc, fails, text = doctor(bench, env)
    assert rc == ExitCode.USAGE_ERROR, text
    assert len(fails) == 1 and "Wi-Fi secret" in fails[0] and "HIL_WIFI_PSK is not set" in fails[0], text
    psk = "doctor-" + os.urandom(6).hex()
    rc, fails, text = doctor(bench, env | {"HIL_WIFI_PSK": psk})
    assert rc == ExitCode.PASSED and not fails, text
    assert psk not in text and psk.encode().hex() not in text


def test_iperf3_absent_on_the_peer_is_named(tmp_path: Path) -> None:
    """The black box's peer is a namespace of this PC (a second NIC), so a PATH without iperf 3 takes
    it from the PC too: two lines, the peer's naming what it lacks."""
    shadow = tmp_path / "bin"
    shadow.mkdir()
    for top in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        for tool in Path(top).iterdir() if Path(top).is_dir() else []:
            if tool.name != "iperf3" and not (shadow / tool.name).exists():
                (shadow / tool.name).symlink_to(tool)
    assert shutil.which("iperf3", path=str(shadow)) is None
    rc, fails, text = doctor(PROJECT_ROOT / "bench" / "black-box.yaml", {**os.environ, "PATH": str(shadow)})
    assert rc == ExitCode.USAGE_ERROR, text
    assert [f.split()[1] for f in fails] == ["iperf", "peer"], text
    assert "lacks iperf3" in fails[1], text


@pytest.mark.parametrize(
    ("bench", "reached"),
    [
        ("wifi-pair.yaml", ("sta-dut -> ap-dut ", "ap-dut -> sta-dut ")),
        ("bridge-endpoint.yaml", ("PC -> endpoint-dut ", "endpoint-dut -> PC ")),
    ],
)
def test_a_pair_is_joined_as_a_run_joins_it(bench: str, reached: tuple[str, ...]) -> None:
    psk = "doctor-" + os.urandom(6).hex()
    rc, fails, text = doctor(PROJECT_ROOT / "bench" / bench, {**os.environ, "HIL_WIFI_PSK": psk})
    assert rc == ExitCode.PASSED and not fails, text
    assert "as a run joins them" in text and text.count("brought up with its pair") == 2, text
    for way in reached:
        assert f"ok   {way}" in text and "3/3 answered" in text, (way, text)
    assert psk not in text and psk.encode().hex() not in text


def test_a_station_with_another_passphrase_is_one_line(tmp_path: Path) -> None:
    pair = yaml.safe_load((PROJECT_ROOT / "bench" / "wifi-pair.yaml").read_text())
    station = pair["duts"][1]["wifi"]
    station.update(psk_env="HIL_STATION_PSK", connect_attempts=1, connect_timeout_s=2)
    bench = tmp_path / "pair.yaml"
    bench.write_text(yaml.safe_dump(pair))
    env = {**os.environ, "HIL_WIFI_PSK": "the-softaps-passphrase", "HIL_STATION_PSK": "another-passphrase"}
    rc, fails, text = doctor(bench, env)
    assert rc == ExitCode.USAGE_ERROR, text
    assert len(fails) == 1 and "pair bring-up" in fails[0] and "DUT sta-dut" in fails[0], text
    assert "4WAY_HANDSHAKE_TIMEOUT" in fails[0] and "psk_env must name the same passphrase" in fails[0], text
    for secret in ("the-softaps-passphrase", "another-passphrase"):
        assert secret not in text, text
