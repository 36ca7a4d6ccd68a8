"""A mistake in a file or an option is never a DUT's verdict: each mistake a user makes in a
threshold file, a bench file, a firmware path or an option is one line naming the file, key and
problem, with exit code 4, before any namespace, DUT or traffic exists (a child suite run, as a
user would start it; `run_suite` fails if it left anything behind)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT, host_firmware
from hil.plumbing.netns import list_namespaces, pid_alive, run_of
from tests.support.child_suite import run_suite

pytestmark = [pytest.mark.virtual_bench]

THRESHOLDS = (PROJECT_ROOT / "thresholds" / "virtual-100m.yaml").read_text()
TCP_TX = "tcp-dut_tx: {min_efficiency_pct: 90, min_tcp_efficiency_pct: 99, max_ttr: 1.11}"
BENCH = (PROJECT_ROOT / "bench" / "virtual.yaml").read_text()
FIRMWARE = "      config: default        # firmware/build/host-default (built on demand)"


def _thresholds(tmp_path: Path, old: str, new: str) -> list[str]:
    assert old in THRESHOLDS, f"the example's anchor {old!r} left thresholds/virtual-100m.yaml"
    path = tmp_path / "thresholds.yaml"
    path.write_text(THRESHOLDS.replace(old, new, 1))
    return ["--thresholds", str(path)]


def _bench(tmp_path: Path, old: str, new: str) -> list[str]:
    assert old in BENCH, f"the example's anchor {old!r} left bench/virtual.yaml"
    path = tmp_path / "bench.yaml"
    path.write_text(BENCH.replace(old, new, 1))
    return ["--bench", str(path)]


def _not_executable(tmp_path: Path) -> list[str]:
    image = tmp_path / "hil-fw-host"
    image.write_bytes((host_firmware("default")).read_bytes())
    image.chmod(0o644)
    return _bench(tmp_path, FIRMWARE, f"      image: {image}")


def _a_file(tmp_path: Path) -> list[str]:
    (tmp_path / "taken").write_text("a file where the results folder should be\n")
    return ["--results-dir", str(tmp_path / "taken")]


# (id, the arguments made in tmp_path, what the one line must contain)
EXAMPLES = [
    ("misspelt-metric", lambda t: _thresholds(t, TCP_TX, "tcp-dut_tx: {min_mbsp: 90}"),
     "scenarios.baseline.tcp-dut_tx.min_mbsp: baseline records no metric 'mbsp'"),
    ("min-above-max", lambda t: _thresholds(t, TCP_TX, "tcp-dut_tx: {min_mbps: 95, max_mbps: 90}"),
     "scenarios.baseline.tcp-dut_tx: min_mbps 95 is above max_mbps 90"),
    ("negative-limit", lambda t: _thresholds(t, TCP_TX, "tcp-dut_tx: {min_mbps: 91, max_jitter_ms: -1}"),
     "max_jitter_ms: a limit cannot be negative"),
    ("infinite-limit", lambda t: _thresholds(t, TCP_TX, "tcp-dut_tx: {min_mbps: .inf}"),
     "scenarios.baseline.tcp-dut_tx.min_mbps: Input should be a finite number"),
    ("misspelt-case-under-default",
     lambda t: _thresholds(t, "  window_pc:\n", "  window_pc:\n    dut_xr-w32K: {min_mbps: 1}\n"),
     "scenarios.window_pc.dut_xr-w32K: no case of window_pc is called 'dut_xr-w32K'"),
    ("unknown-scenario", lambda t: _thresholds(t, "  window_pc:\n", "  windw_pc:\n"),
     "scenarios.windw_pc: unknown scenario"),
    ("repeated-threshold-key", lambda t: _thresholds(t, TCP_TX, "tcp-dut_tx: {min_mbps: 91, min_mbps: 1}"),
     "key 'min_mbps' given twice"),
    ("repeated-bench-key",
     lambda t: _bench(t, "      dut_ip: 10.77.0.2\n", "      dut_ip: 10.77.0.2\n      dut_ip: 10.77.0.9\n"),
     "key 'dut_ip' given twice"),
    ("image-not-executable", _not_executable, "is not executable"),
    ("image-not-elf",
     lambda t: _bench(t, FIRMWARE, f"      image: {PROJECT_ROOT / 'README.md'}"), "is not an ELF file"),
    ("repeated-sweep-point", lambda t: ["--lengths", "64,64"], "--lengths: 64 is given twice"),
    ("empty-sweep-point", lambda t: ["--lengths", "64,,1448"], "--lengths takes comma-separated integers"),
    ("results-dir-is-a-file", _a_file, "is a file, not a folder"),
    ("capture-cap-zero", lambda t: ["--capture-packets", "0"], "a number of packets from 1 to 1000000"),
    ("capture-budget-not-a-number", lambda t: ["--capture-budget-mb", "lots"], "megabytes from 0 to 100000"),
]  # fmt: skip


@pytest.mark.parametrize(("make", "expected"), [e[1:] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES])
def test_a_mistake_is_one_line_and_exit_4_before_any_bench(tmp_path: Path, make, expected: str) -> None:  # type: ignore[no-untyped-def]
    before = set(list_namespaces())
    results = tmp_path / "results"
    proc = run_suite(results, *make(tmp_path), timeout=60)
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    problem = [line for line in lines if expected in line]
    assert proc.returncode == ExitCode.USAGE_ERROR, (proc.returncode, lines[-20:])
    assert problem, lines[-20:]
    # one line names the problem (pytest's usage errors add its own usage lines around an option's)
    assert len([line for line in lines if "Traceback" in line or "INTERNALERROR" in line]) == 0, lines
    assert not (results / "results.jsonl").exists()
    # (a live run's are another run's: a matrix of ./suite test beside this test)
    new = set(list_namespaces()) - before
    made = [ns for ns in new if (run := run_of(ns)) is None or not pid_alive(run)]
    assert not made, f"a namespace was made before the mistake was found: {made}"


def test_suite_ci_argument_errors_come_before_the_set_up(tmp_path: Path) -> None:
    """`./suite ci` says what is wrong with its arguments at once (exit 4), not after the set-up."""
    (tmp_path / "taken").write_text("x\n")
    for args, expected in [
        (["--bench", str(tmp_path / "none.yaml")], "bench file"),
        (["--bench", "bench/virtual.yaml", "--profile", "fast"], "--profile takes quick, full or rfc2544"),
        (["--bench", "bench/virtual.yaml", "--results-dir", str(tmp_path / "taken")], "is a file, not a folder"),
        (["--bogus"], "unknown option --bogus"),
    ]:
        proc = subprocess.run(
            ["./suite", "ci", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=20, check=False
        )
        assert proc.returncode == ExitCode.USAGE_ERROR, (args, proc.stdout, proc.stderr)
        no_set_up = "==" not in proc.stdout  # no set-up step ran (each says "== [time] ...")
        assert expected in proc.stderr and no_set_up, (args, proc.stdout, proc.stderr)
