"""Two boards DUT to DUT, each shared through a labgrid place of its own, end to end: two boards
made of the virtual bench (the host firmware twice on one link, each UART a pseudo-terminal the
exporter serves over RFC 2217, the link shaped at 20 Mbit/s as a switch port would hold it), a real
coordinator and exporter, and a bench file of two `preflashed` boards, the first naming the second
as its `partner:`. A run holds both places for its whole length, measures board to board through
both places' consoles, and releases both at its end; a place it cannot have stops it naming that
board's DUT, the place it already held released; after Ctrl-C both are released and nothing is
left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT, host_firmware
from hil.plumbing.host_dut import HostDutProcess, HostDutSpec, PtySerialLine
from hil.plumbing.labgrid_place import LABGRID_PYTHON, PlaceLock
from hil.plumbing.netns import PARTNER_TAP, PC_IF, TAP, TbfShaping, TopologyConfig, VirtualTopology
from tests.support.child_suite import allure_results, iperf_processes, leftovers, start_child
from tests.support.labgrid_bench import ExportedBoard, LabgridBench

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

PC_IP = "10.82.0.1"
BOARDS = (  # name, address, MAC, place, probe serial
    ("board-a", "10.82.0.2", "02:00:00:00:00:02", "hil-pair-a", "ATML2407060000000a01"),
    ("board-b", "10.82.0.3", "02:00:00:00:00:03", "hil-pair-b", "ATML2407060000000b02"),
)
RATE_MBIT = 20  # the pair's link: both boards' ports, shaped here as a cable and a switch would hold them
CASES = "tcp-dut_tx or tcp-dut_rx"


def bench_file(tmp_path: Path, lab: LabgridBench, pc_ns: str) -> Path:
    duts = []
    for name, ip, mac, place, _ in BOARDS:
        duts.append({
            "name": name,
            "kind": "preflashed",
            "description": f"the host firmware on the virtual link as {name}, shared through labgrid",
            "console": {"dialect": "hil-fw"},  # no port: the place's
            "labgrid": {"place": place, "coordinator": lab.address, "wait_s": 0},
            "network": {"pc_ip": PC_IP, "pc_netns": pc_ns, "dut_ip": ip, "dut_mac": mac},
            "link": {"rate_mbit": RATE_MBIT, "shaping": False},  # shaped by this test, as the switch's ports
            "thresholds": "pair-20m",
        })  # fmt: skip
    duts[0]["partner"] = BOARDS[1][0]
    path = tmp_path / "two-boards.yaml"
    path.write_text(json.dumps({"name": "labgrid-pair", "duts": duts}))  # YAML is a superset of JSON
    return path


@pytest.fixture
def two_boards(tmp_path: Path) -> Iterator[tuple[Path, LabgridBench]]:
    """Two boards (the host firmware twice on one 20 Mbit/s link, each UART a pty) and the lab
    exporting each as a place."""
    if not LABGRID_PYTHON.exists():
        pytest.fail(f"labgrid is not installed in {LABGRID_PYTHON.parent.parent} (./suite setup)")
    (_, ip_a, mac_a, *_), (_, ip_b, mac_b, *_) = BOARDS
    with VirtualTopology(TopologyConfig(PC_IP, ip_a, 24, mac_a), partner=True) as topo:
        topo.shape(TbfShaping(rate_mbit=RATE_MBIT))
        lines = [PtySerialLine(tmp_path / f"uart-{name}") for name, *_ in BOARDS]
        specs = [
            HostDutSpec(binary=host_firmware("default"), netns=topo.dut_ns, tap=TAP, ip=ip_a, mac=mac_a),
            HostDutSpec(binary=host_firmware("default"), netns=topo.dut_ns, tap=PARTNER_TAP, ip=ip_b, mac=mac_b),
        ]
        try:
            with (
                HostDutProcess(specs[0], tmp_path / BOARDS[0][0], lines[0]),
                HostDutProcess(specs[1], tmp_path / BOARDS[1][0], lines[1]),
            ):
                exported = [
                    ExportedBoard(place, os.ttyname(line.slave), PC_IF, probe)
                    for (_, _, _, place, probe), line in zip(BOARDS, lines, strict=True)
                ]
                with LabgridBench(tmp_path / "lab", exported) as lab:
                    yield bench_file(tmp_path, lab, topo.pc_ns), lab
                assert not lab.ser2net_processes(), lab.ser2net_processes()
        finally:
            for line in lines:
                line.close()


def suite_argv(bench: Path, results: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:hypothesispytest", "tests/hil", "-m", "baseline", "-k", CASES,
            "--bench", str(bench), "--repeat", "1", "--wire-capture", "off", "--results-dir", str(results),
            f"--alluredir={results / 'allure-results'}", *extra]  # fmt: skip


def start_suite(bench: Path, results: Path, *extra: str) -> subprocess.Popen[str]:
    return start_child(suite_argv(bench, results, *extra))


def test_two_boards_on_their_places_are_measured_board_to_board_and_both_places_released(
    tmp_path: Path, two_boards: tuple[Path, LabgridBench]
) -> None:
    bench, lab = two_boards
    iperf_before = iperf_processes()
    (a, *_, place_a, _), (b, *_, place_b, _) = BOARDS

    # one run: both places locked for its whole length, TCP each way between the boards, both released
    run = start_suite(bench, tmp_path / "run", "--duration", "3")
    holders = lab.wait_held_by(run.pid)
    assert len(set(holders.values())) == 1, holders  # one holder: the run
    out, _ = run.communicate(timeout=240)
    assert run.returncode == 0 and "2 passed" in out, out[-4000:]
    assert f"hil: labgrid: the run holds 2 places: {place_a} (DUT {a}), {place_b} (DUT {b})" in out, out[-4000:]
    assert lab.holders() == {place_a: None, place_b: None}
    assert not leftovers(run.pid, tmp_path / "run", iperf_before)
    results = allure_results(tmp_path / "run")
    assert all(results[case]["status"] == "passed" for case in ("tcp-dut_tx", "tcp-dut_rx")), sorted(results)
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    measured = [r for r in records if r.get("scenario") == "baseline" and "extra" in r]
    assert {r["case"] for r in measured} == {"tcp-dut_tx", "tcp-dut_rx"}, measured
    assert all(r["extra"]["dut_partner"]["name"] == b for r in measured), measured
    flows = {r["case"]: r["extra"]["flow"] for r in measured}
    assert flows == {"tcp-dut_tx": f"{a} -> {b}", "tcp-dut_rx": f"{b} -> {a}"}, flows
    env = (tmp_path / "run" / "allure-results" / "environment.properties").read_text()
    assert f"DUT {a}: place {place_a} at {lab.address}" in env and f"DUT {b}: place {place_b} at" in env, env
    assert "each on its own port of the bench NIC's switch" in env, env
    for r in measured:  # the figures (gated by the run against pair-20m: the link's theory, 20 Mbit/s)
        print(
            f"{r['case']} ({r['extra']['flow']}): {r['median']:.2f} {r['unit']}, {r['efficiency_pct']:.1f} % of theory"
        )

    # the second board's place held by someone else: the run stops naming that board, the first place released
    assert lab.client("-p", place_b, "lock", user="alice").returncode == 0
    refused = subprocess.run(suite_argv(bench, tmp_path / "refused"), cwd=PROJECT_ROOT, capture_output=True,
                             text=True, timeout=120, check=False)  # fmt: skip
    said = refused.stdout + refused.stderr
    assert refused.returncode == ExitCode.BENCH_FAULT, said[-3000:]
    lines = [ln for ln in said.splitlines() if f"labgrid place {place_b} is held by " in ln and "/alice" in ln]
    assert any(f"cannot reserve DUT '{b}': labgrid place {place_b} is held by " in ln for ln in lines), said[-3000:]
    assert "Traceback" not in said
    assert lab.holder(place_a) is None, lab.holders()  # it had locked board-a's first: released again
    assert lab.client("-p", place_b, "unlock", user="alice").returncode == 0

    # Ctrl-C in the middle of a case: both places released, nothing left behind
    cut = start_suite(bench, tmp_path / "cut", "--duration", "8")
    lab.wait_held_by(cut.pid)
    time.sleep(6)  # the boards' consoles up, the first case's traffic running
    os.killpg(cut.pid, signal.SIGINT)
    out, _ = cut.communicate(timeout=90)
    assert cut.returncode == ExitCode.INTERRUPTED, out[-3000:]
    assert lab.holders() == {place_a: None, place_b: None}
    assert not leftovers(cut.pid, tmp_path / "cut", iperf_before), leftovers(cut.pid, tmp_path / "cut", iperf_before)


def test_doctor_joins_two_boards_as_they_are_and_leaves_placed_boards_to_a_run(
    tmp_path: Path, two_boards: tuple[Path, LabgridBench]
) -> None:
    """`./suite doctor` on two boards: on ports of their own (here the exporter's RFC 2217 ports, as
    a terminal server serves a lab's UARTs) it joins them as they are (it programs nothing) and
    each console pings the other; on labgrid places it locks nothing and says a run joins them."""
    bench, lab = two_boards
    (a, *_), (b, *_) = BOARDS
    data = json.loads(bench.read_text())
    locks = [PlaceLock(board.place, lab.address, 0) for board in lab.boards]  # the ports, as the lab hands them out
    try:
        for dut, lock in zip(data["duts"], locks, strict=True):
            del dut["labgrid"]
            dut["console"]["port"] = lock.acquire().console_url
        local = tmp_path / "two-boards-local.yaml"
        local.write_text(json.dumps(data))
        argv = [sys.executable, "-m", "hil.doctor", "--bench"]
        ran = subprocess.run([*argv, str(local)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=180,
                             check=False)  # fmt: skip
    finally:
        for lock in locks:
            lock.release()
    out = ran.stdout + ran.stderr
    assert f"doctor: DUTs {a} and {b} on one link, as a run joins them" in out, out
    assert "ok   pair link          HardwareLink up" in out, out
    for way in (f"{b} -> {a}", f"{a} -> {b}"):
        assert any(line.startswith("ok") and way in line and "3/3 answered" in line for line in out.splitlines()), out
    print(out)
    placed = subprocess.run([*argv, str(bench)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=180,
                            check=False)  # fmt: skip
    said = placed.stdout + placed.stderr
    assert f"not joined: DUT {a}, {b} on labgrid places, which the doctor does not lock" in said, said
    assert lab.holders() == {board.place: None for board in lab.boards}
    assert "Traceback" not in out + said
