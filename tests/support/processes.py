"""Looking for processes in a self-test without being fooled: pgrep whose failure is an error, not
"nothing found", and a wait until a process started in a namespace is really inside it."""

from __future__ import annotations

import subprocess
import time


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
