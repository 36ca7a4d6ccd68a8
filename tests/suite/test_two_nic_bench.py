"""A real two-NIC bench, built from namespaces by this test: the PC's bench NIC in one namespace,
its second NIC (the peer) in another, and between them a device the suite knows nothing of
(`kind: cabled_black_box`) that forwards only once its `reset` command has "powered it on" (the
test's stand-in: a Linux bridge set up in a third namespace). The suite is given the bench as
an engineer writes it for real hardware - `network.pc_netns`, `peer.netns`, an unshaped link -
and creates nothing of its own: it resets the device, waits until it forwards, and runs the
baseline through it, PC <-> peer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hil.paths import PROJECT_ROOT
from hil.plumbing.in_path import InPathConfig, InPathMode, InPathTopology
from hil.plumbing.netns import list_namespaces

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

ADDRESSES = InPathConfig(pc_ip="10.79.0.1", dut_ip="10.79.0.2", peer_ip="10.79.0.3")


def bench_file(tmp_path: Path, topo: InPathTopology, reset: str) -> Path:
    bench = tmp_path / "two-nic.yaml"
    bench.write_text(json.dumps({  # YAML is a superset of JSON
        "name": "two-nic",
        "duts": [{
            "name": "cabled-box",
            "kind": "cabled_black_box",
            "description": "a bridge cabled between the bench NIC and the second NIC",
            "reset": reset,
            "reset_timeout_s": 20,
            "network": {"pc_ip": ADDRESSES.pc_ip, "pc_netns": topo.pc_ns, "dut_ip": ADDRESSES.dut_ip},
            "peer": {"ip": ADDRESSES.peer_ip, "netns": topo.peer_ns},
            "link": {"rate_mbit": 100, "shaping": False},
            "thresholds": "any-rate",  # given with --thresholds
        }],
    }))  # fmt: skip
    # an unshaped pair of veths runs as fast as this machine moves frames: the case gates that
    # traffic flows both ways through the device, not a rate
    (tmp_path / "any-rate.yaml").write_text(
        "profile: any-rate\nscenarios:\n  baseline:\n    tcp-uplink: {min_mbps: 1}\n    tcp-downlink: {min_mbps: 1}\n"
    )
    return bench


@dataclass
class OwnNamespaces:
    """The namespaces of a run (named after its pid) seen while it ran, and how often they were listed."""

    names: set[str] = field(default_factory=set)
    samples: int = 0
    thread: threading.Thread | None = None


def watch_own_namespaces(child: subprocess.Popen[str]) -> OwnNamespaces:
    """Lists the namespaces every 0.1 s until `child` ends, keeping any of its own."""
    seen = OwnNamespaces()

    def watch() -> None:
        while child.poll() is None:
            seen.names |= {ns for ns in list_namespaces() if ns.startswith(f"hil-{child.pid}-")}
            seen.samples += 1
            time.sleep(0.1)

    seen.thread = threading.Thread(target=watch, name="namespace-watch", daemon=True)
    seen.thread.start()
    return seen


def env_line(results: Path, key: str) -> str:
    env = (results / "allure-results" / "environment.properties").read_text().splitlines()
    return next((line for line in env if line.startswith(f"{key}=")), "")


def test_a_device_cabled_between_two_nics_is_reset_and_measured_through(tmp_path: Path) -> None:
    with InPathTopology(InPathMode.BLACK_BOX, ADDRESSES, pc_shaping=None) as topo:
        powered = tmp_path / "powered-on"
        # "power cycle": the device loses its state, then forwards only after its reset command ran
        reset = (
            f"ip netns exec {topo.dut_ns} sh -c 'ip link del br0 2>/dev/null; "
            "ip link add br0 type bridge stp_state 0 forward_delay 0 && "
            f"ip link set p0 master br0 && ip link set p1 master br0 && ip link set br0 up' && touch {powered}"
        )
        results = tmp_path / "results"
        argv = [sys.executable, "-m", "pytest", "tests/hil", "-m", "baseline", "-k", "tcp",
                "--bench", str(bench_file(tmp_path, topo, reset)), "--thresholds", str(tmp_path / "any-rate.yaml"),
                "--repeat", "1", "--duration", "2",
                "--results-dir", str(results), f"--alluredir={results / 'allure-results'}"]  # fmt: skip
        child = subprocess.Popen(argv, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        made = watch_own_namespaces(child)  # while it runs: the run removes what it made when it ends
        out, err = child.communicate(timeout=300)
        assert made.thread is not None
        made.thread.join(timeout=10)
        assert child.returncode == 0, out[-3000:] + err[-2000:]
        assert powered.exists()  # the reset ran before any case
        assert "reset by `" in env_line(results, "Black_box") and "until it forwarded" in env_line(results, "Black_box")
        assert "2 passed" in out
        env = (results / "allure-results" / "environment.properties").read_text()
        assert f"Peer={ADDRESSES.peer_ip}, namespace {topo.peer_ns} of the bench PC (its second NIC)" in env
        assert "Black_box=a bridge cabled between the bench NIC and the second NIC" in env
        rows = [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]
        assert {r["case"]: r.get("verdict") for r in rows if "verdict" in r} == {
            "tcp-downlink": "passed",
            "tcp-uplink": "passed",
        }
        # the suite created nothing on a real bench: no namespace of its own, at any time of the run
        assert made.samples > 10 and not made.names, made
        assert not [ns for ns in list_namespaces() if ns.startswith(f"hil-{child.pid}-")]
