"""Where the virtual bench runs on the bench PC's CPUs: the DUT on a core of its own, the bench's
tools on the others, both above the host's other load, and the kernel's receive work of each link
on one core.

A DUT on the bench PC (the host firmware, QEMU's emulated board) has the host's CPU as its own,
and a real board never shares its CPU with the PC's traffic generator or with whatever else a CI
runner does. Left to the scheduler, the bench measured the host instead of the DUT:
- a loaded host kept the DUT's thread off a core, and its frames waited (the old "host-starved"
  excuse); a DUT that needs more CPU per frame also waits more, so waiting proved nothing;
- a DUT on the same core as the PC's generator slowed the generator, so a DUT's own slowness came
  out as "generator-limited";
- the veths and the tap receive each frame on the CPU that sent it: the PC's TCP sender sends from
  its own process and from the softirq of the CPU the DUT's ACK arrived on, so segments reached the
  DUT through two CPUs' backlogs, out of order (the old "bench-reordered" excuse).

The plan removes those causes by construction, so none of them needs an excuse:
- the DUT's program is pinned to the last allowed CPU (its own core) at nice -20 (an emulator's
  vCPU thread only: its device and I/O threads are the board's MAC and UART, on the bench's CPUs);
- the suite (and with it every tool it starts: iperf, ping, the stream peers, captures, the peer's
  sshd) runs on the other CPUs at nice -20, and each session the bench runs at nice -20 as a
  session (raise_session: the kernel's autogroups), so a normal-priority load (a CI runner's,
  `--busy`) gets at most about 1 % of a core the bench needs (CFS weights 88761 : 1024);
- a ticker wakes on the DUT's core every 2 ms (hil.plumbing.core_ticker), so that ~1 % is handed
  out in turns of at most about 2 ms, not whole 4-ms ticks (longer than the emulated board's
  receive FIFO lasts at 20 Mbit/s);
- receive packet steering (RPS) puts every link's receive work on one CPU per interface: the
  DUT's ports on the DUT's core (as a board's MAC), the PC's and the peer's on the bench's, so
  each link's frames reach their receiver in the order they were sent.

A machine with a single allowed CPU gets no plan (said in the report's environment)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hil.plumbing.core_ticker import PERIOD_US, core_ticker

BENCH_NICE = -20  # the DUT's and the bench tools' niceness: above any normal-priority load


def session_nice(pid: int) -> int | None:
    """The niceness of `pid`'s autogroup (None: the kernel has no autogroups)."""
    try:
        return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def raise_session(pid: int, niceness: int = BENCH_NICE) -> str | None:
    """`pid`'s autogroup at `niceness`; why not, or None.

    With autogroups (CONFIG_SCHED_AUTOGROUP, kernel.sched_autogroup_enabled=1, Debian's default)
    the scheduler first shares a CPU between sessions, equally, and applies a thread's niceness only
    against the threads of its own session: a nice -20 iperf took 50 % of a core against a nice-0
    loop started in another session (a CI runner's job, a shell), not 98.9 %. Measured on a 2-core
    host with a core kept busy from another session: the PC's iperf server read its socket late, its
    delayed ACKs (40 ms) stalled the DUT's TCP sender 4-5 times a connection and the DUT's 2-s TCP
    rate fell to 89.5-91.5 % of the link (2026-12-04). Each session the bench runs (the suite's own,
    the DUT's program, QEMU, the stream peers, the tools started in a session of their own) gets
    the bench's niceness as a session."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(f"{niceness}\n")
    except FileNotFoundError:
        return None  # no autogroups: niceness alone orders the threads
    except OSError as exc:
        return f"session priority refused ({exc.strerror}: run as root)"
    return None


@dataclass(frozen=True)
class CpuPlan:
    dut_cpus: frozenset[int]  # the DUT's own core(s)
    bench_cpus: frozenset[int]  # the suite and the tools it starts

    def describe(self) -> str:
        return (
            f"DUT on CPU {_cpu_list(self.dut_cpus)}, the bench's tools on CPU {_cpu_list(self.bench_cpus)}, "
            f"both at nice {BENCH_NICE} (their sessions too); each link's receive work steered to one CPU (RPS)"
        )

    def mask(self, cpus: frozenset[int]) -> str:
        """`cpus` as the hexadecimal mask sysfs takes (rps_cpus)."""
        return f"{sum(1 << c for c in cpus):x}"


def _cpu_list(cpus: frozenset[int]) -> str:
    return ",".join(str(c) for c in sorted(cpus))


ALL_CPUS_ENV = "HIL_MACHINE_CPUS"  # the CPUs the first placed run was allowed, for the runs it starts


def machine_cpus() -> list[int]:
    """The CPUs the suite may use on this machine: those its first run was allowed before it placed
    itself (a run started by a placed run, the test command's child runs, inherits its parent's
    bench CPUs only, and must not plan within them), else this process's."""
    inherited = os.environ.get(ALL_CPUS_ENV, "")
    try:
        cpus = sorted({int(c) for c in inherited.split(",") if c.strip()})
    except ValueError:
        cpus = []
    return cpus or sorted(os.sched_getaffinity(0))


def make_plan() -> CpuPlan | None:
    """The plan for this machine: the last CPU the suite may use for the DUT, the rest for the
    bench; None with a single CPU (nothing to separate)."""
    allowed = machine_cpus()
    if len(allowed) < 2:
        return None
    return CpuPlan(frozenset(allowed[-1:]), frozenset(allowed[:-1]))


def _threads(pid: int) -> list[int]:
    try:
        return [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return []


def _set(pid: int, cpus: frozenset[int] | set[int], niceness: int) -> str | None:
    """Every thread of `pid` on `cpus` at `niceness` (Linux keeps both per thread; threads started
    later inherit their creator's); why not, or None."""
    threads = _threads(pid)
    if not threads:
        return f"process {pid} is gone"
    for tid in threads:
        try:
            os.sched_setaffinity(tid, cpus)
            os.setpriority(os.PRIO_PROCESS, tid, niceness)
        except ProcessLookupError:
            continue  # a thread that ended meanwhile
        except OSError as exc:
            return f"CPU placement refused ({exc.strerror}: run as root)"
    return None


def place_process(pid: int, cpus: frozenset[int]) -> str | None:
    """Pins every thread of `pid` to `cpus` at BENCH_NICE; threads it starts later inherit both.
    Returns why it could not (None: placed). (Its session's priority is set where it is started in
    a session of its own: raise_session.)"""
    return _set(pid, cpus, BENCH_NICE)


def place_cpu_thread(pid: int, cpu_thread: int, plan: CpuPlan) -> str | None:
    """The thread that is the DUT's CPU (an emulator's vCPU) on the DUT's core, every other thread
    of `pid` (the emulator's device and I/O threads: a board's MAC and UART work beside its CPU)
    on the bench's, all at BENCH_NICE. Returns why it could not (None: placed)."""
    refused = _set(pid, plan.bench_cpus, BENCH_NICE)
    if refused is None:
        try:
            os.sched_setaffinity(cpu_thread, plan.dut_cpus)
        except OSError as exc:
            return f"CPU placement of thread {cpu_thread} refused ({exc.strerror})"
    return refused


@contextlib.contextmanager
def bench_placed(plan: CpuPlan | None) -> Iterator[str]:
    """The suite's own process (and so every tool it starts) on the bench's CPUs at BENCH_NICE for
    the context, restored after; yields what was done, for the report."""
    me = os.getpid()
    before_cpus, before_nice = os.sched_getaffinity(0), os.getpriority(os.PRIO_PROCESS, 0)
    before_session = session_nice(me)
    os.environ.setdefault(ALL_CPUS_ENV, _cpu_list(frozenset(machine_cpus())))
    if plan is None:  # every CPU of the machine for the bench's tools (a parent's placement not inherited)
        _set(me, set(machine_cpus()), before_nice)
        try:
            yield "no CPU plan: a single CPU is allowed, or the DUT is a black box (no program of ours to place)"
        finally:
            _set(me, before_cpus, before_nice)
        return
    refused = _set(me, plan.bench_cpus, BENCH_NICE) or raise_session(me)
    if refused is not None:
        _set(me, before_cpus, before_nice)
        yield f"no CPU plan: {refused}"
        return
    try:
        with core_ticker(min(plan.dut_cpus)) as ticker:
            yield f"{plan.describe()}; the DUT's core ticked every {PERIOD_US / 1000:g} ms ({ticker})"
    finally:
        _set(me, before_cpus, before_nice)
        if before_session is not None:
            raise_session(me, before_session)


def steer_receive(netns_prefix: list[str], interface: str, cpus: frozenset[int], plan: CpuPlan) -> None:
    """Every frame `interface` receives handled on `cpus` (RPS on its receive queues), so one
    CPU's backlog holds them in the order they came. Best effort: a kernel without RPS keeps its
    default (the report's environment says the plan, not each interface)."""
    script = f'for q in /sys/class/net/{interface}/queues/rx-*/rps_cpus; do echo {plan.mask(cpus)} > "$q"; done'
    subprocess.run([*netns_prefix, "sh", "-c", script], capture_output=True, text=True, check=False)
