"""Looking for processes in a self-test without being fooled: pgrep whose failure is an error, not
"nothing found", a wait until a process started in a namespace is really inside it, and which run
of the suite a bench process belongs to (two runs at once: a matrix of ./suite test and a test
beside it, or two CI jobs on one PC)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from hil.plumbing.netns import list_namespaces, run_of


def pgrep(*args: str) -> list[str]:
    """pgrep's lines (none: nothing matched, exit code 1); any other failure (a bad pattern or
    option, exit code 2 or 3) fails the test instead of reading as "no such process"."""
    out = subprocess.run(["pgrep", *args], capture_output=True, text=True, check=False)
    assert out.returncode in (0, 1), f"pgrep {' '.join(args)} failed ({out.returncode}): {out.stderr.strip()}"
    return out.stdout.splitlines()


def wait_until_inside(ns: str, pid: int) -> None:
    """`ip netns exec` has entered the namespace and exec'd the command (a process that is still
    on its way in when the namespace is removed ends with an error of its own, which would pass
    for having been killed)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=True).stdout.split()
        if str(pid) in pids:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} never appeared in namespace {ns}")


def _net_namespace(pid: int | str) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def run_namespaces() -> dict[int, int]:
    """The named namespaces of the suite's runs on this machine: namespace inode -> the run's pid."""
    found = {}
    for ns in list_namespaces():
        if (run := run_of(ns)) is not None:
            with contextlib.suppress(OSError):
                found[os.stat(f"/run/netns/{ns}").st_ino] = run
    return found


def owning_run(pid: int | str, namespaces: dict[int, int] | None = None) -> int | None:
    """The run whose bench process `pid` belongs to (the pid in its namespace's name), None: in no
    run's namespace (the host's, or one already removed: a run's leftover)."""
    ino = _net_namespace(pid)
    return None if ino is None else (run_namespaces() if namespaces is None else namespaces).get(ino)


def not_another_runs(lines: Iterable[str], own_run: int | None = None) -> set[str]:
    """The pgrep -a lines of the processes that are not another live run's: not inside the bench
    of a run of the suite other than `own_run` or this process (a matrix of ./suite test running
    beside: its iperf is not this run's leftover)."""
    namespaces, ours = run_namespaces(), (None, own_run, os.getpid())
    found = set()
    for line in lines:
        pid = line.split(maxsplit=1)[0]
        ino = _net_namespace(pid)
        if ino is None and not Path(f"/proc/{pid}").exists():
            continue  # it ended since pgrep listed it (another run's iperf at its end): nobody's leftover
        if (None if ino is None else namespaces.get(ino)) in ours:
            found.add(line)
    return found


def parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def in_runs_started_here(lines: Iterable[str]) -> list[str]:
    """The pgrep -a lines of the processes inside the bench of a run of the suite that this
    process started (a child run), not any other run's on the machine."""
    namespaces, me = run_namespaces(), os.getpid()
    runs = {line: owning_run(line.split(maxsplit=1)[0], namespaces) for line in lines}
    return [line for line, run in runs.items() if run is not None and parent_of(run) == me]
