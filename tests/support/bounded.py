"""A child program the tests run for minutes (a child run of the suite, `./suite ci`, act,
gitlab-ci-local) in its own process group, so that nothing it started outlives the test: on its
timeout, on pytest-timeout's interruption or on Ctrl-C the whole group gets SIGINT (the suite then
removes its namespaces, processes and captures as on Ctrl-C), then SIGKILL after a grace."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

CLEANUP_GRACE_S = 60.0  # an interrupted suite run removes its bench first


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def end_group(proc: subprocess.Popen[str], grace_s: float = CLEANUP_GRACE_S) -> None:
    """Ends the child's process group as Ctrl-C would, waits while any of it is still cleaning up
    (the leader may leave before its children: act before the job's suite run), then kills what is
    left of it."""
    _signal_group(proc.pid, signal.SIGINT)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.2)  # (reaps the leader, so that only the others keep the group alive)
        if proc.poll() is not None and not _group_alive(proc.pid):
            return
    _signal_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def run_bounded(
    argv: Sequence[str], timeout: float, cwd: Path | str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Runs `argv` to its end, output captured; past `timeout` seconds (or when the test itself is
    interrupted) its whole process group is ended and the test fails saying so."""
    proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        end_group(proc)
        out, err = proc.communicate()
        raise AssertionError(f"{argv[0]} ran past its {timeout:.0f} s and was ended:\n{(out + err)[-3000:]}") from None
    except BaseException:  # pytest-timeout, Ctrl-C: nothing of the child's outlives the test
        end_group(proc)
        raise
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)
