"""Top-level pytest configuration of the HIL suite."""

import multiprocessing
import os
import signal
import sys
import threading

from hil.plumbing.labgrid_place import last_resort_release
from hil.plumbing.netns import delete_run_namespaces
from hil.plumbing.ssh_host import kill_open_connections

pytest_plugins = [
    "fixtures.options",
    "fixtures.cases",
    "fixtures.dut_session",
    "fixtures.report",
    "fixtures.background_charts",
    "fixtures.exit_status",
    "fixtures.step_times",
    "fixtures.heap",
    "fixtures.embedded_pipeline",
]

UNWIND_LIMIT_S = 30.0


def _last_resort_cleanup() -> None:
    """Runs when the fixtures have not finished unwinding UNWIND_LIMIT_S after Ctrl-C or SIGTERM
    (a third-party teardown that blocks): removes this run's namespaces with every DUT, QEMU and
    iperf process in them, its SSH connections to a peer host, and its helper processes, and exits."""
    removed = delete_run_namespaces(os.getpid())
    last_resort_release()  # a labgrid place this run holds
    kill_open_connections()  # a remote peer's programs end with their SSH sessions
    for helper in multiprocessing.active_children():  # e.g. pytest-embedded's serial reader
        helper.kill()
    sys.stderr.write(
        f"\nhil: teardown still running {UNWIND_LIMIT_S:g} s after the interrupt; removed {len(removed)} "
        "namespaces with their processes and stopped\n"
    )
    sys.stderr.flush()
    os._exit(130)


def _interrupt(signum: int, frame: object) -> None:
    """Ctrl-C, SIGTERM and SIGHUP unwind like KeyboardInterrupt, so fixtures remove namespaces, taps and
    processes. A second signal does not cut that unwinding short (it would leave them behind);
    a watchdog ends the run, cleaned up, if a teardown blocks."""
    if any(t.name == "hil-unwind-watchdog" for t in threading.enumerate()):
        sys.stderr.write("\nhil: cleaning up after the interrupt (namespaces, DUT, traffic); please wait\n")
        return
    timer = threading.Timer(UNWIND_LIMIT_S, _last_resort_cleanup)
    timer.name = "hil-unwind-watchdog"
    timer.daemon = True
    timer.start()
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _interrupt)
signal.signal(signal.SIGINT, _interrupt)
signal.signal(signal.SIGHUP, _interrupt)  # the terminal closed (an SSH session to the bench PC dropped)
