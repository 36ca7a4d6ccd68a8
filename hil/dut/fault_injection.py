"""Fault injection for the suite's own tests (--inject-dut-kill CASE@SECONDS[@DUT]): a DUT's
program on the bench PC killed SECONDS into the first case whose id contains CASE, once per run;
the run's DUT, or the DUT named (a bench of several DUTs: the DUT behind)."""

from __future__ import annotations

import subprocess
import threading


class DutKill:
    """The run's one kill: `arm` starts it for a matching case, `disarm` stops a pending one."""

    def __init__(self, spec: str | None) -> None:
        self.case, self.seconds, self.dut = parse_kill(spec) if spec else (None, 0.0, None)
        self.done = False
        self._timer: threading.Timer | None = None

    def arm(self, case_id: str, pids: dict[str, int | None]) -> None:
        """`pids`: the case's DUTs by name, the run's DUT first."""
        if self.case is None or self.case not in case_id or self.done:
            return
        if self.dut is not None and self.dut not in pids:
            raise ValueError(f"--inject-dut-kill: no DUT named {self.dut!r} in this case (it has {', '.join(pids)})")
        pid = pids[self.dut] if self.dut is not None else next(iter(pids.values()), None)
        if pid is None:
            return
        self.done = True
        argv = ["kill", "-9", str(pid)]
        self._timer = threading.Timer(self.seconds, lambda: subprocess.run(argv, check=False))
        self._timer.start()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def parse_kill(spec: str) -> tuple[str, float, str | None]:
    """CASE@SECONDS[@DUT] (SECONDS default 1; an empty CASE is the first case; no DUT: the run's):
    ValueError naming the problem."""
    case, _, rest = spec.partition("@")
    seconds, _, dut = rest.partition("@")
    try:
        delay = float(seconds or 1)
    except ValueError:
        raise ValueError(f"--inject-dut-kill {spec}: SECONDS must be a number (CASE@SECONDS[@DUT])") from None
    if not delay > 0 or delay == float("inf"):
        raise ValueError(f"--inject-dut-kill {spec}: SECONDS must be a positive number of seconds")
    return case, delay, dut or None
