"""Each virtual bench's margin and the test command's false alarms. Prints figures; exits 1 when
unchanged firmware failed a run as the DUT's (a false alarm), unless --figures-only.

  1. margin: the DUT's TCP ceiling on the unshaped virtual link, each way, with the bench's CPU plan
     (hil.plumbing.cpu_plan: the DUT on a core of its own, the tools on the others), idle and with
     --busy cores kept busy, against the theoretical TCP goodput of the 20 and 100 Mbit/s links
     (margin = ceiling / theory: above 1 the bench can hold that link's rate; the test command gates
     at 20 Mbit/s, `./suite main` measures at 100). Benches: the host firmware (the virtual bench)
     and the Cortex-M7 image on QEMU (bench/qemu.yaml);
  2. false alarms: --runs child runs of the baseline family (and the idle ping's latency) as CI
     runs it (the test command's link at 20 Mbit/s, thresholds/virtual-20m.yaml, 3 repetitions per
     case as the quick profile, a miss measured again) with the firmware as built, idle and busy,
     each load's runs into one results folder as a CI job's; each run that ends as a DUT failure
     (exit 1) is a false alarm, its cases named. --history-out keeps each load's history
     (virtual-20m-idle.jsonl, virtual-20m-busy.jsonl): the recordings benchmarks/detection_power.py
     replays (benchmarks/record_history.py makes the same for one load or for QEMU).

Run as root from the project root:
  python -m benchmarks.bench_margin [--runs 20] [--busy 1] [--history-out benchmarks/data]
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.entry import parsed, parser, run_benchmark, verdict
from benchmarks.record_history import REPEAT, SELECTION
from hil.console.serial_console import SerialConsole
from hil.errors import DutError
from hil.exit_codes import ExitCode
from hil.paths import board_firmware, host_firmware
from hil.plumbing.cpu_plan import CpuPlan, bench_placed, make_plan, place_cpu_thread, place_process
from hil.plumbing.cpu_share import thread_named
from hil.plumbing.host_dut import HostDutProcess, HostDutSpec, PtySerialLine
from hil.plumbing.netns import TAP, VirtualTopology
from hil.plumbing.qemu import MACHINE, VCPU_THREAD, QemuDutProcess
from hil.stats import summarize
from hil.theory import tcp_goodput_mbps
from hil.tools.iperf2 import Iperf2ClientArgs, Iperf2Server, run_client
from tests.support.planted import busy_cores, child_run

LINKS_MBIT = (20.0, 100.0)  # the test command's link and the seeds' (./suite main)
DIRECTIONS = ("DUT->PC", "PC->DUT")


@dataclass(frozen=True)
class Ceiling:
    bench: str
    direction: str
    busy: int
    values: list[float]


@contextlib.contextmanager
def host_dut(topo: VirtualTopology, workdir: Path) -> Iterator[tuple[SerialConsole, int | None]]:
    spec = HostDutSpec(host_firmware("default"), topo.dut_ns, TAP, topo.config.dut_ip)
    with HostDutProcess(spec, workdir / "host") as proc, SerialConsole(str(proc.console_path)) as console:
        yield console, proc.pid


@contextlib.contextmanager
def qemu_dut(topo: VirtualTopology, workdir: Path) -> Iterator[tuple[SerialConsole, int | None]]:
    line = PtySerialLine(workdir / "qemu" / "console")
    image, prefix = board_firmware(MACHINE, "default"), topo.exec_prefix(topo.dut_ns)
    try:
        with (
            QemuDutProcess(image, prefix, TAP, line, workdir / "qemu.log", None) as proc,
            SerialConsole(str(line.link)) as console,
        ):
            yield console, proc.pid
    finally:
        line.close()


DutStarter = Callable[[VirtualTopology, Path], contextlib.AbstractContextManager[tuple[SerialConsole, int | None]]]
BENCHES: dict[str, DutStarter] = {
    "virtual (host firmware)": host_dut,
    "QEMU Cortex-M7": qemu_dut,
}


def tcp_once(topo: VirtualTopology, console: SerialConsole, direction: str, duration_s: float, workdir: Path) -> float:
    """One unshaped TCP test through the DUT's console; the receiver's goodput in Mbit/s."""
    pc, cfg = topo.exec_prefix(topo.pc_ns), topo.config
    if direction == "PC->DUT":
        console.send("iperf -s")
        console.wait_text(r"TCP server listening", timeout_s=5)
        run_client(pc, Iperf2ClientArgs(host=cfg.dut_ip, duration_s=duration_s), timeout_s=duration_s + 20)
        final = console.wait_final("iperf", timeout_s=15).final
        if final is None or final.fields.get("status") != "ok":
            raise DutError(f"the DUT's iperf server did not finish cleanly: {final}")
        return final.get_float("mbps")
    with Iperf2Server(pc, udp=False, port=5001, log_path=workdir / "server.csv") as srv:
        reply = console.command(f"iperf -c {cfg.pc_ip} -t {duration_s:g}", timeout_s=duration_s + 20)
        if reply.final is None or reply.final.fields.get("status") != "ok":
            raise DutError(f"the DUT's iperf client did not finish cleanly: {reply.output[-3:]}")
        return srv.wait_record(timeout_s=5).mbps


def ceilings(args: argparse.Namespace, plan: CpuPlan | None, workdir: Path) -> list[Ceiling]:
    rows: list[Ceiling] = []
    with VirtualTopology(cpu_plan=plan) as topo:
        for bench, start in BENCHES.items():
            with start(topo, workdir) as (console, pid):
                if plan is not None and pid is not None:  # as the suite places it (hil.dut.local, hil.dut.qemu)
                    vcpu = thread_named(pid, VCPU_THREAD) if start is qemu_dut else None
                    refused = place_cpu_thread(pid, vcpu, plan) if vcpu else place_process(pid, plan.dut_cpus)
                    if refused:
                        print(f"  {bench}: {refused}")
                console.identify(20)
                for busy in sorted({0, args.busy}):
                    with busy_cores(busy):
                        for direction in DIRECTIONS:
                            values = [
                                tcp_once(topo, console, direction, args.duration, workdir) for _ in range(args.repeat)
                            ]
                            rows.append(Ceiling(bench, direction, busy, values))
                            print(f"  {bench:24s} {direction:8s} busy {busy}: {summarize(values).format('Mbit/s')}",
                                  flush=True)  # fmt: skip
    return rows


def print_margins(rows: list[Ceiling]) -> None:
    theories = {link: tcp_goodput_mbps(link, 1460) for link in LINKS_MBIT}
    head = "".join(f"  margin at {link:g} ({theories[link]:.2f})" for link in LINKS_MBIT)
    print(f"\n{'bench':24s} {'direction':9s} {'busy':>4s} {'ceiling Mbit/s':>15s}{head}")
    for r in rows:
        ceiling = summarize(r.values).median
        margins = "".join(f"  {ceiling / theories[link]:>20.2f}x" for link in LINKS_MBIT)
        print(f"{r.bench:24s} {r.direction:9s} {r.busy:>4d} {ceiling:>15.2f}{margins}")


def false_alarms(args: argparse.Namespace, workdir: Path) -> list[str]:
    """--runs child runs of the baseline family, idle and busy; the runs that failed as the DUT's."""
    alarms: list[str] = []
    for busy in sorted({0, args.busy}):
        failed: list[str] = []
        bench_faults = 0
        results = workdir / f"runs-{busy}"  # one results folder per load: its history is a CI job's
        for i in range(args.runs):
            run = child_run(results, (*SELECTION, "--repeat", str(REPEAT)), None, busy)
            missed = sorted(o.case for o in run.outcomes.values() if o.status in ("failed", "error"))
            if run.returncode == ExitCode.DUT_FAILED:
                failed.append(f"run {i + 1}: {', '.join(missed) or 'no case named'}")
            elif run.returncode == ExitCode.BENCH_FAULT:
                bench_faults += 1
            elif run.returncode != ExitCode.PASSED:
                raise DutError(f"child run {i + 1} ended with exit {run.returncode}: {run.tail()[-600:]}")
            print(f"  busy {busy} run {i + 1:2d}: exit {run.returncode} in {run.seconds:.0f} s"
                  f"{' (' + ', '.join(missed) + ')' if missed else ''}", flush=True)  # fmt: skip
        print(f"false alarms, busy {busy}: {len(failed)} of {args.runs} runs failed as the DUT's, "
              f"{bench_faults} bench faults")  # fmt: skip
        if args.history_out is not None:
            kept = args.history_out / f"virtual-20m-{'busy' if busy else 'idle'}.jsonl"
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(results / "history" / "metrics.jsonl", kept)
            print(f"history of the {args.runs} runs: {kept}")
        alarms += [f"busy {busy}: {f}" for f in failed]
    return alarms


def run(args: argparse.Namespace) -> int:
    plan = make_plan()
    with tempfile.TemporaryDirectory(prefix="hil-margin-") as tmp, bench_placed(plan) as placement:
        print(f"[1] margin: unshaped TCP ceilings ({placement})", flush=True)
        print_margins(ceilings(args, plan, Path(tmp)))
        if args.runs == 0:
            return verdict([], args.figures_only)
        print(f"\n[2] false alarms: {args.runs} runs of the baseline family and the idle ping as CI runs them "
              f"({REPEAT} repetitions a case)", flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="hil-false-alarms-") as tmp:
        alarms = false_alarms(args, Path(tmp))
    return verdict([f"false alarm ({a})" for a in alarms], args.figures_only)


def main() -> int:
    p = parser(__doc__)
    p.add_argument("--busy", type=int, default=1, help="cores kept busy for the busy figures (default 1)")
    p.add_argument("--runs", type=int, default=20, help="baseline runs per load for the false alarms (0: none)")
    p.add_argument("--history-out", type=Path, help="keep each load's history here (detection_power's recordings)")
    args = parsed(p)
    if args.busy < 0 or args.runs < 0:
        p.error("--busy and --runs take a number >= 0")
    return run_benchmark(run, args)


if __name__ == "__main__":
    sys.exit(main())
