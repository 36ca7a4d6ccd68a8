"""RFC 2544 on a real two-NIC bench, built from namespaces by this test as in
test_two_nic_bench.py: the PC's bench NIC in one namespace, its second NIC in another, given to
the suite as an engineer writes them for hardware (`network.pc_netns`, `peer.netns`, `tester:
{ceilings: FILE}`). First the two NICs joined by a "cable" (a veth pair, no device):
`./suite calibrate-tester` measures the tester's ceilings into the file. Then a device between
them (a bridge that forwards once its reset command has "powered it on"): the family reads the
ceilings, measures the throughput and the reset time through the device, and a frame size the
file lacks, or no file, stops the case with one line naming the calibration command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT
from hil.plumbing import in_path, tester_loop
from hil.plumbing.in_path import PC_IF, PEER_IF, InPathConfig, InPathMode, InPathTopology
from hil.plumbing.netns import list_namespaces
from hil.traffic.frame_tester import line_rate_fps

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

ADDRESSES = InPathConfig(pc_ip="10.79.2.1", dut_ip="10.79.2.2", peer_ip="10.79.2.3")
THRESHOLDS = "profile: any-rate\nscenarios:\n  rfc2544:\n    default: {min_efficiency_pct: 50}\n"


def bench_file(tmp_path: Path, pc_ns: str, dut_ns: str, peer_ns: str, ceilings: Path) -> Path:
    reset = (  # a power cycle: the device forgets its state and forwards again after 100 ms
        f"ip netns exec {dut_ns} sh -c 'ip link del br0 2>/dev/null; sleep 0.1; "
        "ip link add br0 type bridge stp_state 0 forward_delay 0 && "
        "ip link set p0 master br0 && ip link set p1 master br0 && ip link set br0 up'"
    )
    bench = tmp_path / "two-nic.yaml"
    bench.write_text(json.dumps({"name": "two-nic", "duts": [{
        "name": "cabled-box", "kind": "cabled_black_box", "description": "a bridge between the two NICs",
        "reset": reset, "reset_timeout_s": 20,
        "network": {"pc_ip": ADDRESSES.pc_ip, "pc_netns": pc_ns, "dut_ip": ADDRESSES.dut_ip},
        "peer": {"ip": ADDRESSES.peer_ip, "netns": peer_ns},
        "link": {"rate_mbit": 100, "shaping": False},
        "tester": {"ceilings": str(ceilings)},
        "thresholds": "any-rate",
    }]}))  # fmt: skip
    (tmp_path / "any-rate.yaml").write_text(THRESHOLDS)
    return bench


def same_nics(pc_ns: str, peer_ns: str) -> None:
    """The NICs keep their link addresses when recabled (a veth pair made again gets new ones)."""
    for ns, dev, mac in ((pc_ns, PC_IF, "02:00:00:00:79:01"), (peer_ns, PEER_IF, "02:00:00:00:79:03")):
        for args in (("down",), ("address", mac), ("up",)):
            subprocess.run(["ip", "-n", ns, "link", "set", dev, *args], check=True, timeout=10)


def rfc2544(tmp_path: Path, bench: Path, name: str, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    results = tmp_path / name
    argv = [sys.executable, "-m", "pytest", "tests/hil", "-m", "rfc2544", "-k", "downlink", "--bench", str(bench),
            "--thresholds", str(tmp_path / "any-rate.yaml"), "--profile", "quick", *args,
            "--results-dir", str(results), f"--alluredir={results / 'allure-results'}"]  # fmt: skip
    return subprocess.run(argv, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, check=False), results


@pytest.mark.extended  # `./suite test --extended` (time: tests/suite/test_two_nic_bench.py runs the two-NIC bench)
def test_a_calibrated_two_nic_tester_measures_a_cabled_device(tmp_path: Path) -> None:
    pc_ns, dut_ns, peer_ns = in_path._namespace_names(990_001)
    ceilings = tmp_path / "tester-ceilings.json"
    bench = bench_file(tmp_path, pc_ns, dut_ns, peer_ns, ceilings)
    # the two NICs joined by a cable: the tester's own ceilings
    with tester_loop.TesterLoop(ADDRESSES, None, pc_ns=pc_ns, peer_ns=peer_ns):
        same_nics(pc_ns, peer_ns)
        cal = subprocess.run([sys.executable, "-m", "hil.traffic.calibrate_tester", "--bench", str(bench),
                              "--frame-sizes", "512,1518", "--seconds", "0.5"],
                             cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert cal.returncode == 0, cal.stdout + cal.stderr
    data = json.loads(ceilings.read_text())
    # an unshaped veth pair: the sender's line-rate floor is the limit (within 3 % on an idle host); a
    # host that stalls the tester gets its own lower ceiling (18,562 of 23,496 at 512 B and 7,861 of
    # 8,127 at 1518 B on a noisier machine): never above the line, the tester's reach is the number
    for size in (512, 1518):
        assert 0.7 * line_rate_fps(100, size) <= data["ceilings"][str(size)]["fps"] <= 1.03 * line_rate_fps(100, size)
    assert data["pc"]["netns"] == pc_ns and data["peer"]["netns"] == peer_ns and data["link_mbit"] == 100

    # the device cabled between them
    with InPathTopology(InPathMode.BLACK_BOX, ADDRESSES, pc_shaping=None, pc_ns=pc_ns, dut_ns=dut_ns, peer_ns=peer_ns):
        same_nics(pc_ns, peer_ns)
        reach = min(line_rate_fps(100, 512), data["ceilings"]["512"]["fps"])  # the line, or the tester's ceiling
        # the kernel's bridge forwards the tester's reach on an idle host; on a busy one its softirq
        # shares the cores with the tester (85 % in a clean-clone run, below 90 % twice in a row in
        # another): a run below 80 % of the reach is measured once more, and the second decides, as
        # --confirm-misses does
        for attempt in ("measured", "measured-again"):
            run, results = rfc2544(
                tmp_path, bench, attempt, "--frame-sizes", "512", "--rfc2544-tests", "throughput,reset"
            )
            assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
            lines = (results / "results.jsonl").read_text().splitlines()
            (rec,) = [r for r in map(json.loads, lines) if "values" in r]
            if rec["measured"]["ndr_fps"] >= 0.8 * reach:
                break
            print(f"{attempt}: NDR {rec['measured']['ndr_fps']} frames/s below 80 % of the reach {reach:.0f}")
        assert rec["measured"]["tester_fps"] == round(data["ceilings"]["512"]["fps"]), rec["measured"]
        assert "calibrated" in rec["extra"]["tester_ceiling_from"], rec["extra"]
        assert rec["measured"]["ndr_fps"] >= 0.8 * reach, rec["measured"]
        assert {s["source"] for s in rec["extra"]["spacing"]} == {"the tester's send times"}
        reset = rec["extra"]["reset"]  # the power cycle: at least its 100 ms without forwarding
        assert reset["reset_by"] == "the bench file's reset command" and reset["reset_ms"] >= 100, reset
        assert (results / "rfc2544.html").exists()

        # a frame size the calibration lacks, then no calibration: one line naming the command
        for name, message in (("uncalibrated-size", "no ceiling at 64 B"), ("no-file", "the tester is not calibrated")):
            if name == "no-file":
                ceilings.unlink()
            run, _ = rfc2544(tmp_path, bench, name, "--frame-sizes", "64", "--rfc2544-tests", "throughput")
            out = run.stdout + run.stderr
            assert run.returncode == ExitCode.USAGE_ERROR, out[-3000:]
            assert message in out and "./suite calibrate-tester" in out, out[-3000:]
            assert "Traceback" not in out and "raise ConfigError" not in out, out[-3000:]  # no code, one line
    assert not {pc_ns, dut_ns, peer_ns} & set(list_namespaces())
