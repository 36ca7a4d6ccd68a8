"""A case's capture never fills the disk and never outlives its run: tcpdump stops at its packet
cap with a file no larger than the cap allows; a run killed with SIGKILL takes its tcpdump with it
(the parent-death signal), and the next run removes the captures it left; a tcpdump that did
survive its run is killed by the next run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hil.paths import PROJECT_ROOT
from hil.plumbing.netns import VirtualTopology
from hil.wire.capture import CAPTURE_ROOT, SNAP_LEN, Capture, cleanup_stale, max_bytes, tcpdump_count
from hil.wire.follow import CaptureFollower
from hil.wire.pcap_summary import count_records, summarize_pcap
from tests.support.processes import pgrep

pytestmark = pytest.mark.virtual_bench

CAP = 300


def _flood(prefix: list[str], count: int) -> None:
    subprocess.run([*prefix, "ip", "link", "set", "lo", "up"], check=True)
    subprocess.run([*prefix, "ping", "-f", "-q", "-c", str(count), "-s", "1200", "127.0.0.1"], check=True,
                   capture_output=True, timeout=60)  # fmt: skip


def _tcpdumps(path_part: str) -> list[str]:
    return pgrep("-f", f"tcpdump .*{path_part}")


def test_a_capture_stops_at_its_packet_cap_with_a_bounded_file(tmp_path: Path) -> None:
    with VirtualTopology() as topo:
        prefix = topo.exec_prefix(topo.pc_ns)
        cap = Capture(prefix, "lo", tmp_path / "capped.pcap", max_packets=CAP)
        _flood(prefix, 1)  # lo up before tcpdump opens it
        cap.start()
        _flood(prefix, 2000)  # 4,000 packets of 1,228 bytes on the wire: far beyond the cap
        result = cap.stop()
    size = result.path.stat().st_size
    print(f"{result.packets} packets, {size} bytes (bound {max_bytes(CAP)}), truncated {result.truncated}")
    assert result.packets == CAP and result.truncated
    assert count_records(result.path) == CAP
    assert size <= max_bytes(CAP) < 2000 * 2 * 1228  # headers only: the snap length holds
    summary = summarize_pcap(result.path)
    assert summary.packets == CAP and summary.direction("127.0.0.1", "127.0.0.1").ip_bytes >= CAP * 1228
    assert SNAP_LEN == 128


def test_a_capture_followed_while_tcpdump_writes_it_summarizes_as_the_finished_file(tmp_path: Path) -> None:
    """hil.wire.follow on a real tcpdump: the case's summary and a window's, read while the file
    is written, are what the finished file says read afterwards."""
    with VirtualTopology() as topo:
        prefix = topo.exec_prefix(topo.pc_ns)
        cap = Capture(prefix, "lo", tmp_path / "followed.pcap", max_packets=20_000)
        _flood(prefix, 1)
        cap.start()
        follower = CaptureFollower(cap.path, poll_s=0.02)
        follower.start()
        _flood(prefix, 300)
        opened = follower.open_window()
        _flood(prefix, 500)
        closed = follower.close_window()
        _flood(prefix, 200)
        result = cap.stop()
        case = follower.finish()
    assert opened is not None and closed is not None and case is not None, follower.failed
    window, end = closed
    print(f"{result.packets} packets; window [{opened}, {end}): {window.packets}")
    assert case.packets == result.packets == count_records(result.path) >= 2000
    assert case.text("127.0.0.1", "127.0.0.1") == summarize_pcap(result.path).text("127.0.0.1", "127.0.0.1")
    assert window.packets == end - opened >= 1000
    assert window.text("127.0.0.1", "127.0.0.1") == summarize_pcap(result.path, opened, end).text(
        "127.0.0.1", "127.0.0.1"
    )


def test_a_killed_run_takes_its_tcpdump_along_and_the_next_run_removes_its_captures() -> None:
    with VirtualTopology() as topo:
        prefix = topo.exec_prefix(topo.pc_ns)
        _flood(prefix, 1)
        script = (
            "import sys, time\n"
            "from hil.wire.capture import Capture, run_dir\n"
            f"c = Capture({prefix!r}, 'lo', run_dir() / 'case-pc.pcap')\n"
            "c.start(); print('listening', flush=True); time.sleep(120)\n"
        )
        child = subprocess.Popen([sys.executable, "-c", script], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline().strip() == "listening"
        captures = CAPTURE_ROOT / f"run-{child.pid}"
        assert _tcpdumps(str(captures)), "the child's tcpdump is not running"
        child.kill()  # SIGKILL: no cleanup of its own runs
        child.wait()
        deadline = time.monotonic() + 5
        while _tcpdumps(str(captures)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _tcpdumps(str(captures)), "tcpdump outlived the run that started it"
        assert (captures / "case-pc.pcap").exists()  # left behind by the killed run ...
        assert captures in cleanup_stale()  # ... and removed by the next run
        assert not captures.exists()


def test_the_next_run_kills_a_tcpdump_that_survived_its_run(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid whose run is gone
    stale = CAPTURE_ROOT / f"run-{dead.pid}"
    with VirtualTopology() as topo:
        prefix = topo.exec_prefix(topo.pc_ns)
        _flood(prefix, 1)
        survivor = Capture(prefix, "lo", stale / "case-pc.pcap")  # its pid file beside it, as a run leaves it
        survivor.start()
        try:
            assert _tcpdumps(str(stale)) and not os.path.exists(f"/proc/{dead.pid}")
            assert stale in cleanup_stale()
            deadline = time.monotonic() + 5
            while _tcpdumps(str(stale)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not _tcpdumps(str(stale)) and not stale.exists()
        finally:
            survivor.stop()


def test_tcpdumps_counts_are_read_in_both_of_its_formats() -> None:
    at_exit = (
        "tcpdump: listening on lo\n6 packets captured\n12 packets received by filter\n3 packets dropped by kernel\n"
    )
    on_sigusr1 = "tcpdump: 6 packets captured, 12 packets received by filter, 2 packets dropped by kernel\n"
    assert tcpdump_count(at_exit, "packets dropped by kernel") == 3
    assert tcpdump_count(on_sigusr1, "packets dropped by kernel") == 2
    assert tcpdump_count(on_sigusr1 + at_exit, "packets captured") == 6  # the last count given
    assert tcpdump_count("tcpdump: listening on lo\n", "packets captured") == 0
