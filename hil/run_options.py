"""The suite's command-line options (the pytest layer registers them: fixtures/options.py) and
the checks of their values that argparse runs (one line naming the option and the problem)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path

from hil.dut.bench_file import DEFAULT_BENCH_FILE
from hil.paths import PROJECT_ROOT
from hil.scenarios.contract import families
from hil.scenarios.profiles import PROFILES
from hil.wire.capture import DEFAULT_MAX_PACKETS, max_bytes

DEFAULT_RESULTS_DIR = PROJECT_ROOT / "results"


def swept_axes() -> list:  # type: ignore[type-arg]
    """Every family's axes: their points per profile and the options overriding them (a sweep
    family's `axis`; a family sweeping more than one thing lists them as `axes`)."""
    out = []
    for f in families():
        out += [axis] if (axis := getattr(f, "axis", None)) is not None else []
        out += list(getattr(f, "axes", ()))
    return out


DEFAULT_BUDGET_MB = 400
MAX_CAPTURE_PACKETS = 1_000_000


def add_options(add: Callable[..., object]) -> None:
    """Registers every option through `add` (argparse's / pytest's addoption)."""
    add("--bench", type=Path, default=None, help=f"bench file (default: {DEFAULT_BENCH_FILE})")
    add("--dut-name", default=None, help="DUT of the bench file to test (default: the first)")
    add("--thresholds", type=Path, default=None, help="threshold file (default: the DUT's profile)")
    add(
        "--profile",
        choices=sorted(PROFILES),
        default="full",
        help="quick: the whole matrix in minutes (CI); full: the seeds' durations and points (default); "
        "rfc2544: full with the capacity search's trials at RFC 2544's 60 s",
    )
    add(
        "--link-mbit",
        type=float,
        default=None,
        metavar="MBIT",
        help="the virtual bench's shaped link at this rate instead of the bench file's (a real link keeps its "
        "own); the threshold profile must be one for that rate (--thresholds, e.g. thresholds/virtual-20m.yaml)",
    )
    add("--repeat", type=int, default=None, help="repetitions per case, median asserted (default: profile)")
    add("--duration", type=float, default=None, help="seconds per traffic test (default: profile)")
    add("--stream-duration", type=float, default=None, help="seconds per stress stream run (default: profile)")
    for axis in swept_axes():  # each sweep family's points, overridden on the command line
        # argparse formats help with %: a family's own "%" must reach it doubled
        help_text = axis.help.replace("%", "%%")
        add(axis.option, dest=axis.field, default=None, help=f"{help_text} (default: profile)")
    add("--results-dir", type=results_dir, default=DEFAULT_RESULTS_DIR, help="where results.jsonl and logs go")
    add(
        "--bench-fault",
        dest="bench_fault",
        choices=("fail", "xfail"),
        default="fail",
        help="a case whose only problem is the bench, proven by a rule of hil/bench_faults.py (docs/verdicts.md: "
        "a sender of the bench below its offered rate with all it sent arrived, a tool that failed while the DUT "
        "still answered): fail it "
        "(default: the main job, real benches), or xfail it with the reason (self-test runs, whose gate "
        "must not depend on how busy the machine is)",
    )
    add(
        "--confirm-misses",
        action="store_true",
        default=False,
        help="a case that misses a threshold (or regresses against --baseline) on a DUT running on the bench PC "
        "(virtual, QEMU, a bridge in the path) is measured again: the majority of three trials is the verdict, "
        "never a bench fault; every trial is recorded (self-test runs)",
    )
    add(
        "--baseline",
        type=Path,
        default=None,
        metavar="FILE",
        help="regression gate: the results.jsonl of a known-good run (its latest run; FILE@RUN for another) or "
        "a baseline made from it (python -m hil.results.baseline); a case whose median is worse than the "
        "baseline's by more than its scenario's tolerance (threshold profile, `regression:`) fails as a regression",
    )
    add(
        "--labgrid-place",
        default=None,
        metavar="NAME",
        help="reserve the DUT through this labgrid place (its console, bench NIC and probe from the place's "
        "resources; the coordinator from the bench file's labgrid.coordinator or $LG_COORDINATOR)",
    )
    add(
        "--labgrid-wait",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long to wait for each labgrid place of the run (the DUT's, its partner's) another run holds "
        "(default: the bench file's, else 600)",
    )
    add(
        "--inject-dut-kill",
        default=None,
        metavar="CASE@SECONDS[@DUT]",
        help="fault injection: kill the DUT SECONDS into the first test whose id contains CASE "
        "(@DUT: the DUT of that name, e.g. the DUT behind a bridge)",
    )
    add(
        "--plant-defect",
        dest="plant_defect",
        default=None,
        metavar="NAME=VALUE[,...]",
        help="the suite's own self-test: plant defects in the DUT's firmware on purpose (the project's host "
        "firmware's `fault` command: tx_work_us, rx_drop_ppm, ack_delay_us, ...; docs/verdicts.md), which the "
        "verdicts must fail as the DUT's; every record says what was planted",
    )
    add(
        "--wire-capture",
        choices=("on", "off"),
        default="on",
        help="a bounded capture of every traffic case on the PC's interface (and the peer's behind a DUT in the "
        "path), headers only, attached as PCAP with its summary, and the case's loss ledger (default: on; off for "
        "timing-sensitive runs: counters and ledgers stay, captures go)",
    )
    add(
        "--capture-packets",
        type=capture_packets,
        default=DEFAULT_MAX_PACKETS,
        metavar="N",
        help=f"packets at most per capture (a case's traffic beyond them is summarized from the counters only; "
        f"default {DEFAULT_MAX_PACKETS}: about {max_bytes(DEFAULT_MAX_PACKETS) // 1_000_000} MB)",
    )
    add(
        "--capture-budget-mb",
        type=capture_budget,
        default=DEFAULT_BUDGET_MB,
        metavar="MB",
        help=f"PCAP attached to the report per run at most; beyond it a capture is summarized but not attached "
        f"(default {DEFAULT_BUDGET_MB})",
    )
    add(
        "--trend-gate",
        choices=("on", "off"),
        default="off",
        help="a case metric whose trend over the history's recent runs regressed (hil.report.trends: the first "
        "runs of a bench are its baseline) fails the run (exit 1) and its trend result, and so the CI job's quality "
        "gate (default off for pytest: the trend page and the terminal report it, a skipped result; ./suite ci sets "
        "it on unless --no-trend-gate)",
    )
    add(
        "--compare-run",
        default=None,
        metavar="RUN_ID",
        help="the run the summary's change column compares with (a run id of <results-dir>/history/"
        "metrics.jsonl, e.g. a baseline run); default: the latest earlier run of the same DUT and profile",
    )


def capture_packets(text: str) -> int:
    """--capture-packets: a whole number of packets, 1 to MAX_CAPTURE_PACKETS."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_CAPTURE_PACKETS:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of packets from 1 to {MAX_CAPTURE_PACKETS}")
    return int(text)


def capture_budget(text: str) -> int:
    """--capture-budget-mb: whole megabytes, 0 (attach none) to 100,000."""
    if not text.isdigit() or int(text) > 100_000:
        raise argparse.ArgumentTypeError(f"{text!r}: megabytes from 0 to 100000")
    return int(text)


def results_dir(text: str) -> Path:
    """--results-dir: a folder, made if missing; a file or a place no folder can be made is one line."""
    path = Path(text)
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: {part} is a file, not a folder")
        if part.exists():
            break
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{text}: cannot make the folder: {exc.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text}: the folder is not writable")
    return path
