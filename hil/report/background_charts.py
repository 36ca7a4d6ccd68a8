"""A case's charts drawn beside the run, not in its time: the attachment is named in the case's
Allure result at once (an empty file the listener writes), and its PNG drawn by a helper process
(hil.report.chart_helper) and written over that file while the next cases run.

The helper takes no CPU the bench wants, from its first instruction on (pyplot's import and its
own start are 1.5 s of CPU): it runs in a session of its own whose autogroup is at niceness 19
(the bench's sessions are at -20: weights 15 : 88761) and in the lowest CPU class there is
(SCHED_IDLE); a waking iperf, capture or console reader takes the CPU from it at once. The
session matters: the scheduler shares a CPU between autogroups first, so a SCHED_IDLE helper in
the suite's own session had the suite's weight against the PC's iperf server in its session, and
a 64-byte UDP receiver lost 74 % of its datagrams in its socket while a chart was drawn. It dies
with the suite's process (PR_SET_PDEATHSIG), also when that is SIGKILLed.

The session waits for every chart before it ends; a chart that could not be drawn is a suite
error naming the chart and its case. Without an Allure results directory nothing is drawn:
allure-pytest would attach nothing."""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import allure
import allure_commons

from hil.paths import PROJECT_ROOT
from hil.plumbing.proc import die_with_parent

WAIT_AT_END_S = 300.0  # the longest a session waits for its charts (a chart takes 0.2-0.3 s)
HELPER_NICE = 19  # the helper's session's niceness (the autogroup's)

Draw = Callable[..., bytes | None]


def _helper_preexec() -> None:
    """In the helper before exec, in its new session: its autogroup at HELPER_NICE, the lowest
    CPU class, killed with the suite's process."""
    die_with_parent()
    with contextlib.suppress(OSError):  # (a kernel without autogroups: SCHED_IDLE alone)
        Path("/proc/self/autogroup").write_text(str(HELPER_NICE))
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


class _AttachmentName:
    """allure_commons' hook: the file name the Allure listener wrote the last attachment to."""

    def __init__(self) -> None:
        self.file_name: str | None = None

    @allure_commons.hookimpl
    def report_attached_data(self, body: bytes, file_name: str) -> None:
        self.file_name = file_name


@dataclass
class _Pending:
    chart: str
    case: str
    done: threading.Event = field(default_factory=threading.Event)
    error: str | None = None  # why it was not drawn (one line)
    detail: str = ""  # the helper's traceback


class ChartDrawer:
    """One run's helper process and the charts it still owes."""

    def __init__(self, results: Path) -> None:
        self.results = results
        self._names = _AttachmentName()
        allure_commons.plugin_manager.register(self._names)
        self._helper: subprocess.Popen[bytes] | None = None
        self._threads: list[threading.Thread] = []
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()  # jobs to write (None: no more)
        self._ids = itertools.count(1)
        self._jobs: dict[int, _Pending] = {}  # the charts the helper still owes, by job
        self._charts: list[_Pending] = []  # every chart of the run
        self._ended: str | None = None  # why the helper is gone (a chart asked for after it is not drawn)
        self._lock = threading.Lock()

    def attach(self, name: str, draw: Draw, *args: Any, **kwargs: Any) -> None:
        """Names the PNG attachment `name` in the running case and has the helper draw it."""
        self._names.file_name = None
        allure.attach(b"", name=name, attachment_type=allure.attachment_type.PNG)
        if self._names.file_name is None:  # no Allure listener took it
            return
        case = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        job_id = next(self._ids)
        job = pickle.dumps((job_id, str(self.results / self._names.file_name), draw, args, kwargs))
        pending = _Pending(name, case)
        self._charts.append(pending)
        with self._lock:
            if self._ended is not None:  # its helper died earlier in the run: said at the end, not waited for
                pending.error = self._ended
                pending.done.set()
                return
            self._jobs[job_id] = pending
        self._start()
        self._outbox.put(job)  # (written by a thread: a helper behind never holds up the case)

    def _start(self) -> None:
        if self._helper is not None:  # started at the first chart: a run without one pays nothing
            return
        self._helper = helper = subprocess.Popen(
            [sys.executable, "-m", "hil.report.chart_helper"], cwd=PROJECT_ROOT, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, start_new_session=True, preexec_fn=_helper_preexec,
        )  # fmt: skip
        for target, what in ((self._write_jobs, "jobs"), (self._read_answers, "answers")):
            thread = threading.Thread(target=target, args=(helper,), name=f"chart helper {what}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _write_jobs(self, helper: subprocess.Popen[bytes]) -> None:
        assert helper.stdin is not None
        with contextlib.suppress(OSError):  # (it died: its reader says so for every chart it owed)
            while (job := self._outbox.get()) is not None:
                helper.stdin.write(job)
                helper.stdin.flush()
        with contextlib.suppress(OSError):
            helper.stdin.close()  # its end of input: it leaves once it has drawn what it took

    def _read_answers(self, helper: subprocess.Popen[bytes]) -> None:
        assert helper.stdout is not None
        while True:
            try:
                job_id, *error = pickle.load(helper.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                break
            with self._lock:
                pending = self._jobs.pop(job_id, None)
            if pending is not None:
                if error and error[0] is not None:
                    pending.error, pending.detail = error[0], error[1]
                pending.done.set()
        code = helper.wait()
        self._fail_all(f"the chart helper ended (exit code {code}) before drawing it")

    def _fail_all(self, why: str) -> None:
        with self._lock:
            owed, self._jobs, self._ended = list(self._jobs.values()), {}, why
        for pending in owed:
            pending.error = why
            pending.done.set()

    def finish(self, timeout_s: float = WAIT_AT_END_S) -> list[tuple[str, str, str]]:
        """Waits for every chart, ends the helper; per chart not drawn: which (its name and case),
        why, and the helper's traceback."""
        self._hurry()
        deadline = time.monotonic() + timeout_s
        for pending in self._charts:
            if not pending.done.wait(max(0.0, deadline - time.monotonic())):
                pending.error = f"not drawn within {timeout_s:g} s"
        self.close()
        return [(f"chart {p.chart!r} of {p.case}", p.error, p.detail) for p in self._charts if p.error is not None]

    def close(self) -> None:
        """Ends the helper (what it still owes is dropped: an interrupted run's end)."""
        allure_commons.plugin_manager.unregister(self._names)
        helper, self._helper = self._helper, None
        if helper is None:
            return
        self._outbox.put(None)
        try:
            helper.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()
        for thread in self._threads:
            thread.join(timeout=5)

    def _hurry(self) -> None:
        """The helper at the normal CPU class and niceness: the run has ended, nothing else runs
        (refused unprivileged: it draws at idle then)."""
        if self._helper is None:
            return
        with contextlib.suppress(OSError):
            os.sched_setscheduler(self._helper.pid, os.SCHED_OTHER, os.sched_param(0))
        with contextlib.suppress(OSError):
            Path(f"/proc/{self._helper.pid}/autogroup").write_text("0")


_running: ChartDrawer | None = None


def start(results: Path) -> ChartDrawer:
    global _running
    _running = ChartDrawer(results)
    return _running


def stop() -> ChartDrawer | None:
    global _running
    drawer, _running = _running, None
    return drawer


def attach_chart(name: str, draw: Draw, *args: Any, **kwargs: Any) -> None:
    """The chart `draw(*args, **kwargs)` (a function of hil.scenarios.charts: its arguments data,
    picklable) attached to the running case as PNG `name`, drawn beside the run; nothing without
    an Allure results directory."""
    if _running is not None:
        _running.attach(name, draw, *args, **kwargs)
