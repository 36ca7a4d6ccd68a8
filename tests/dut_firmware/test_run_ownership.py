"""Which run of the suite a bench process belongs to (tests/support/processes.py): a process in a
live namespace of another run is that run's, not a leftover of this one; a process left in a
namespace already removed, or in the host's, still counts."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.processes import in_runs_started_here, not_another_runs, wait_until_inside

pytestmark = pytest.mark.virtual_bench


def test_another_live_runs_process_is_not_a_leftover_but_an_orphan_is() -> None:
    other_run = subprocess.Popen(["sleep", "60"])  # a live process standing for another run
    ns = f"hil-{other_run.pid}-1-pc"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    inside = subprocess.Popen(["ip", "netns", "exec", ns, "sleep", "60"])
    host = subprocess.Popen(["sleep", "60"])
    try:
        wait_until_inside(ns, inside.pid)
        lines = {f"{inside.pid} sleep 60", f"{host.pid} sleep 60"}
        assert not_another_runs(lines) == {f"{host.pid} sleep 60"}
        assert not_another_runs(lines, own_run=other_run.pid) == lines  # that run's own check keeps it
        # (the stand-in run is this process's child: its process is in a run started here, the host's is not)
        assert in_runs_started_here(sorted(lines)) == [f"{inside.pid} sleep 60"]
        subprocess.run(["ip", "netns", "delete", ns], check=True)  # the run gone, its process left
        assert not_another_runs(lines) == lines
    finally:
        for p in (inside, host, other_run):
            p.kill()
            p.wait()
        subprocess.run(["ip", "netns", "delete", ns], check=False, capture_output=True)
