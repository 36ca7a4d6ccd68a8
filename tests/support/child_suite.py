"""Runs (part of) the HIL suite in a child process on the virtual bench, as a user would, and
finds what such a run left behind (namespaces, DUT and iperf processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hil.paths import PROJECT_ROOT
from hil.plumbing.netns import list_namespaces
from hil.wire.capture import CAPTURE_ROOT
from tests.support.bounded import end_group
from tests.support.processes import not_another_runs, parent_of, pgrep

BASELINE = ("tests/hil", "-m", "baseline")


def run_suite(
    results: Path, *args: str, timeout: float = 300, tests: str | tuple[str, ...] = BASELINE
) -> subprocess.CompletedProcess[str]:
    """Runs (part of) the HIL suite in a child process and checks it left nothing behind. Without
    captures unless `args` asks for them (`--wire-capture on`: the last one given counts): the
    behaviour these runs check is not the wire's (tests/dut_firmware/test_wire_capture.py,
    tests/suite/test_packet_count.py; the Ctrl-C test captures)."""
    selection = (tests,) if isinstance(tests, str) else tests
    # (without hypothesis's pytest plugin: no property test runs in a child, and its summary hook
    # imports hypothesis, half a second of each child's start)
    argv = [sys.executable, "-m", "pytest", "-p", "no:hypothesispytest", *selection, "--results-dir", str(results),
            f"--alluredir={results / 'allure-results'}", "--repeat", "1", "--duration", "2", "--wire-capture", "off",
            *args]  # fmt: skip
    iperf_before = iperf_processes()
    # its own process group: on the timeout or the test's interruption, all of it ends as on Ctrl-C
    child = subprocess.Popen(argv, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)  # fmt: skip
    try:
        out, err = child.communicate(timeout=timeout)
    except BaseException:
        end_group(child)
        raise
    assert not leftovers(child.pid, results, iperf_before), leftovers(child.pid, results, iperf_before)
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


def start_child(argv: list[str]) -> subprocess.Popen[str]:
    """A child run started in the project, in its own session (Ctrl-C to its group ends all of it,
    as a terminal's does), its output (stdout and stderr) on one pipe; the caller waits for it."""
    return subprocess.Popen(argv, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # fmt: skip


def allure_results(results: Path) -> dict[str, dict]:
    out = {}
    for f in (results / "allure-results").glob("*-result.json"):
        data = json.loads(f.read_text())
        point = next((p["value"] for p in data.get("parameters", []) if p["name"] == "scenario_case"), "")
        out[point.strip(chr(39)).split("/")[-1]] = data  # baseline/tcp-dut_tx -> tcp-dut_tx
    return out


def iperf_processes() -> set[str]:
    # exact names: a process whose name only contains "iperf" (a fuzz target) is not a leftover
    return set(pgrep("-a", "-x", "iperf|iperf3"))


def dut_processes(results: Path) -> list[int]:
    """Host DUT programs whose output goes to a log under `results` (i.e. started by that run)."""
    pids = []
    for pid in map(int, pgrep("-x", "hil-fw-host")):
        try:
            if os.readlink(f"/proc/{pid}/fd/1").startswith(str(results)):
                pids.append(pid)
        except OSError:
            continue
    return pids


def leftovers(pid: int, results: Path, iperf_before: set[str]) -> list[str]:
    """Namespaces, DUT processes and iperf processes a child run of the suite left behind (not
    those of another run beside it, in its live namespaces: a matrix of ./suite test)."""
    found = [ns for ns in list_namespaces() if ns.startswith(f"hil-{pid}-")]
    found += [f"DUT process {pid}" for pid in dut_processes(results)]
    found += sorted(not_another_runs(iperf_processes() - iperf_before, pid))
    # (the RFC 2544 family's)
    found += [f"frame tester {p}" for p in sorted(not_another_runs(pgrep("-a", "-x", "frametester|modelbox"), pid))]
    # (the DUT core's ticker runs in no bench namespace: the run's own, or an orphan, is a leftover)
    tickers = [line for line in pgrep("-a", "-x", "coreticker") if parent_of(int(line.split()[0])) in (pid, 1)]
    found += [f"core ticker {line}" for line in tickers]
    captures = CAPTURE_ROOT / f"run-{pid}"  # its captures: tcpdump and files gone with the run
    found += [f"tcpdump {p}" for p in pgrep("-f", f"tcpdump .*{captures}/")]
    found += [str(captures)] if captures.exists() else []
    return found
