"""Background processes of the bench: started in their own session with output to a log file,
stopped with SIGTERM and, after a grace period, SIGKILL of the whole process group."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from hil.errors import BenchError


def start_logged(
    argv: list[str],
    log_path: Path,
    what: str,
    env: dict[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
) -> subprocess.Popen[bytes]:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        try:
            return subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                env=env,
                pass_fds=pass_fds,
            )
        except FileNotFoundError as exc:
            raise BenchError(f"{what}: program not found: {exc.filename}") from None


def stop_process(proc: subprocess.Popen[bytes] | None, grace_s: float = 2.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        proc.wait()
