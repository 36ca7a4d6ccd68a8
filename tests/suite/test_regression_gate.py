"""The regression gate end to end on the virtual bench, its link shaped to 40 Mbit/s (where 100
Mbit/s is the host's speed: CI measured TCP at 79 Mbit/s of 100 on a busy machine): a baseline
from one run (made with the one command), an unchanged second run passes it, and a run with the
link shaped to half the rate fails
every baseline case as a regression - through the CI job (`./suite ci`), with the DUT-failure exit
code, JUnit XML carrying the numbers and the report's summary showing measured vs baseline vs
threshold - while the fixed thresholds alone pass it."""

from __future__ import annotations

import csv
import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT
from hil.report.summary import BENCH_FAULTS
from tests.support.bounded import run_bounded
from tests.support.child_suite import BASELINE, run_suite

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

CASES = ("tcp-dut_tx", "tcp-dut_rx", "udp-dut_tx", "udp-dut_rx")
# Limits relative to the link's theory only: a slower link meets them as well as the full one.
# The margins are the host's: these runs are single 2-s trials on a DUT that shares the bench PC's
# CPU (a clean-clone run on a busy machine measured TCP at 86.4 and 87.5 % of the 40-Mbit/s link,
# and a second run of the same build can land 11 % below the first), so the floors are 80 %, the
# tolerance 15 % and the slower link half the rate: the gate's own arithmetic is what is tested,
# not this host's noise; a miss is measured once more (--confirm-misses) before it counts
KNOWN_GOOD_MBIT, SLOWER_MBIT = 40, 20
RELATIVE_THRESHOLDS = """profile: relative-only
scenarios:
  baseline:
    tcp-dut_tx: {min_efficiency_pct: 80}
    tcp-dut_rx: {min_efficiency_pct: 80}
    udp-dut_tx: {min_efficiency_pct: 80, max_loss_pct: 0.5}
    udp-dut_rx: {min_efficiency_pct: 80, max_loss_pct: 0.5}
regression:
  default: {floor_pct: 15, k_sd: 2}
"""


def bench_at(rate_mbit: int) -> str:
    """The virtual bench file with its link shaped to `rate_mbit`."""
    text = (PROJECT_ROOT / "bench/virtual.yaml").read_text()
    assert "rate_mbit: 100" in text, "bench/virtual.yaml no longer shapes its link at 100 Mbit/s"
    return text.replace("rate_mbit: 100", f"rate_mbit: {rate_mbit}")


def verdicts(results: Path) -> dict[str, str]:
    """Each case's last verdict in a results.jsonl."""
    out = {}
    for line in (results / "results.jsonl").read_text().splitlines():
        d = json.loads(line)
        if "verdict" in d and "values" not in d:
            out[d["case"]] = d["verdict"]
    return out


def junit_cases(path: Path) -> dict[str, tuple[dict[str, str], str | None]]:
    """Each JUnit test case's properties and its failure message (None when it passed)."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        failure = case.find("failure")
        name = case.get("name", "")
        out[next((c for c in CASES if c in name), name)] = (props, None if failure is None else failure.get("message"))
    return out


def run_without_bench_fault(results: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A child run, run again (into `results`-2, -3) while the bench faulted in it (a generator
    short of its rate, the DUT's thread off its core), as a CI job retries exit code 75: the gate
    under test compares DUT numbers, and a bench fault gives none."""
    run = run_suite(results, *args)
    for attempt in (2, 3):  # a busy machine faulted twice in a row in a clean-clone run
        if run.returncode != ExitCode.BENCH_FAULT:
            break
        run = run_suite(results.with_name(f"{results.name}-{attempt}"), *args)
    return run


@pytest.mark.extended  # `./suite test --extended` (time: the GitHub workflow's test runs the same CI job)
def test_baseline_gate_passes_an_unchanged_run_and_fails_a_slower_link_as_regression(tmp_path: Path) -> None:
    thresholds = tmp_path / "relative-only.yaml"
    thresholds.write_text(RELATIVE_THRESHOLDS)
    known_good_link = tmp_path / "link-known-good.yaml"
    known_good_link.write_text(bench_at(KNOWN_GOOD_MBIT))
    common = ("--thresholds", str(thresholds), "--profile", "quick", "--confirm-misses")
    known_good_args = (*common, "--bench", str(known_good_link))

    first = run_without_bench_fault(tmp_path / "known-good", *known_good_args)
    assert first.returncode == 0, first.stdout[-3000:]
    known_good_dir = Path(first.args[first.args.index("--results-dir") + 1])
    baseline = tmp_path / "baselines" / "virtual.json"
    made = subprocess.run(["./suite", "baseline", str(known_good_dir / "results.jsonl"), str(baseline)],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert made.returncode == 0 and "4 cases of run" in made.stdout, made.stdout + made.stderr

    same = run_without_bench_fault(tmp_path / "unchanged", *known_good_args, "--baseline", str(baseline),
                                   f"--junitxml={tmp_path / 'u.xml'}")  # fmt: skip
    # no case regressed; one the bench faulted in three runs in a row (a busy host: a regression a
    # second trial does not reproduce is one, --confirm-misses) says nothing of the gate either way
    assert same.returncode in (0, ExitCode.BENCH_FAULT), same.stdout[-3000:]
    unchanged_dir = Path(same.args[same.args.index("--results-dir") + 1])
    unchanged = verdicts(unchanged_dir)
    assert all(unchanged[c] == "passed" or unchanged[c] in BENCH_FAULTS for c in CASES), same.stdout[-3000:]
    unchanged_junit = junit_cases(tmp_path / "u.xml")
    # (a regression its second trial did not reproduce ends "passed" in results.jsonl, a bench
    # fault in JUnit: only the cases JUnit passed count here)
    passed = [c for c in CASES if unchanged[c] == "passed" and unchanged_junit[c][1] is None]
    assert len(passed) >= 2, (unchanged, {c: unchanged_junit[c][1] for c in CASES})
    props, _ = unchanged_junit[passed[0]]
    known_good = [json.loads(x) for x in (known_good_dir / "results.jsonl").read_text().splitlines()]
    median = next(r["median"] for r in known_good if r.get("case") == passed[0] and "median" in r)
    assert float(props[f"baseline/{passed[0]}/baseline_mbps"]) == pytest.approx(median, rel=1e-3), props

    slower = tmp_path / "slower-link.yaml"
    slower.write_text(bench_at(SLOWER_MBIT))
    out_dir = tmp_path / "slower"
    job = run_bounded(
        ["./suite", "ci", "--bench", str(slower), "--results-dir", str(out_dir), "--baseline", str(baseline), "--",
         *BASELINE[1:], "--repeat", "1", "--duration", "2", *common],
        timeout=600, cwd=PROJECT_ROOT,
    )  # fmt: skip
    out = job.stdout + job.stderr
    assert job.returncode == ExitCode.DUT_FAILED, out[-4000:]
    assert "exit code 1 (DUT failure or regression (do not retry))" in out, out[-2000:]
    # every case a regression, not "below threshold"; a case the bench faulted in (a generator short
    # of its rate on this host: CI and a clean-clone run each had one) says nothing of the gate
    got = verdicts(out_dir)
    regressed = [c for c in CASES if got[c] == "regression"]
    assert all(got[c] == "regression" or got[c] in BENCH_FAULTS for c in CASES), out[-3000:]
    assert len(regressed) >= 2 and {"tcp-dut_tx", "tcp-dut_rx"} & set(regressed), got
    cases = junit_cases(out_dir / "junit.xml")
    for case in regressed:
        props, failure = cases[case]
        assert failure is not None and "REGRESSION against the baseline" in failure, (case, failure)
        key = f"baseline/{case}"
        measured, limit = float(props[f"{key}/mbps"]), float(props[f"{key}/regression_limit_mbps"])
        assert measured < limit < float(props[f"{key}/baseline_mbps"]), props
        assert float(props[f"{key}/efficiency_pct"]) >= float(props[f"{key}/min_efficiency_pct"]), props
        assert props[f"{key}/verdict"] == "regression" and f"{key}/theory_mbps" in props
    rows = list(csv.DictReader((out_dir / "summary.csv").open()))
    mbps = {r["case"].split("/")[-1]: r for r in rows if r["metric"] == "mbps"}
    assert {mbps[c]["verdict"] for c in regressed} == {"REGRESSION"}
    assert all(mbps[c]["baseline"] and mbps[c]["baseline_limit"] for c in regressed)
    eff = [r for r in rows if r["metric"] == "efficiency_pct" and r["case"].split("/")[-1] in regressed]
    assert eff and {r["verdict"] for r in eff} == {"pass"}  # the fixed thresholds alone pass
    assert (out_dir / "report" / "index.html").is_file() and (out_dir / "quality-gate.txt").is_file()
    print(f"unchanged: {verdicts(unchanged_dir)}; slower link: {got}")
