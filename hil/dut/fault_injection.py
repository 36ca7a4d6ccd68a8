"""Fault injection for the suite's own tests (--inject-dut-kill CASE@SECONDS): the DUT's program
on the bench PC killed SECONDS into the first case whose id contains CASE, once per run."""

from __future__ import annotations

import subprocess
import threading


class DutKill:
    """The run's one kill: `arm` starts it for a matching case, `disarm` stops a pending one."""

    def __init__(self, spec: str | None) -> None:
        case, _, seconds = (spec or "").partition("@")
        self.case, self.seconds, self.done = case, float(seconds or 1), False
        self._timer: threading.Timer | None = None

    def arm(self, case_id: str, pid: int | None) -> None:
        if not self.case or self.case not in case_id or self.done or pid is None:
            return
        self.done = True
        argv = ["kill", "-9", str(pid)]
        self._timer = threading.Timer(self.seconds, lambda: subprocess.run(argv, check=False))
        self._timer.start()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
