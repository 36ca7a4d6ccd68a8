"""hil/wire/follow.py: a capture read while it is written gives the same summaries, of the case and
of a window inside it, as the finished file read afterwards (hil.wire.pcap_summary)."""

import time
from pathlib import Path

import pytest

from hil.wire.follow import CaptureFollower
from hil.wire.pcap_summary import summarize_pcap
from tests.selftest.test_pcap_summary import DUT, PC, session  # noqa: F401  (the fixture)

pytestmark = pytest.mark.selftest


def _grow(path: Path, whole: bytes, upto: int) -> None:
    with path.open("ab") as f:
        f.write(whole[path.stat().st_size if path.exists() else 0 : upto])


def test_a_followed_capture_summarizes_as_the_finished_file(tmp_path: Path, session: Path) -> None:  # noqa: F811
    whole = session.read_bytes()
    growing = tmp_path / "growing.pcap"
    follower = CaptureFollower(growing, poll_s=0.01)
    follower.start()  # before tcpdump has written even the file's header
    time.sleep(0.03)
    cuts = [10, 24, 24 + 7, len(whole) // 3, len(whole) // 2 + 5, 2 * len(whole) // 3 + 1, len(whole)]
    window_at = window_end = None
    for i, cut in enumerate(cuts):  # the file grows record by record, and mid-record
        _grow(growing, whole, cut)
        time.sleep(0.03)
        if i == 3:
            window_at = follower.open_window()
        if i == 5:
            closed = follower.close_window()
            assert closed is not None
            window, window_end = closed
    case = follower.finish()
    assert case is not None and follower.failed is None
    assert window_at is not None and window_end is not None and window_at < window_end
    read_after = summarize_pcap(growing)  # the same file, finished
    assert case.packets == read_after.packets == follower.records
    assert case.as_fields(PC, DUT) == read_after.as_fields(PC, DUT) and case.text(PC, DUT) == read_after.text(PC, DUT)
    slice_after = summarize_pcap(growing, window_at, window_end)
    assert window.packets == slice_after.packets == window_end - window_at
    assert window.as_fields(PC, DUT) == slice_after.as_fields(PC, DUT)
    assert window.text(PC, DUT) == slice_after.text(PC, DUT)


def test_a_file_it_cannot_follow_says_why_and_leaves_the_summary_to_the_caller(tmp_path: Path) -> None:
    notes = tmp_path / "notes.pcap"
    notes.write_bytes(b"this is not a capture file at all\n")
    follower = CaptureFollower(notes, poll_s=0.01)
    follower.start()
    assert follower.open_window() is None and follower.close_window() is None and follower.finish() is None
    assert follower.failed is not None and str(notes) in follower.failed
