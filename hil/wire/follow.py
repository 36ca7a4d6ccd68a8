"""A capture read while tcpdump writes it (`-U`: each packet written at once): a thread reads the
file's new complete records every POLL_S and feeds them to the case's summary and, while a window
is open, to the window's (hil.wire.pcap_summary.Summarizer). A window's close and the case's end
then read only the last records, instead of the whole file after the traffic: the evidence is
gathered alongside the traffic (about 2 us a record: 1-2 % of a core at 100 Mbit/s of full-size
frames, on a machine whose gates are shaped with margin).

It follows classic pcap files only (what tcpdump writes); any other file, or one it cannot read,
ends the following with the reason (`failed`), and the caller summarizes the file as before."""

from __future__ import annotations

import struct
import threading
from pathlib import Path

from hil.wire.pcap_summary import Summarizer, WireSummary, classic_header, classic_records

POLL_S = 0.25
FILE_HEADER = 24


class CaptureFollower:
    def __init__(self, path: Path, poll_s: float = POLL_S) -> None:
        self.path = path
        self.poll_s = poll_s
        self.case = Summarizer(path)
        self.window: Summarizer | None = None
        self.records = 0  # complete records read so far
        self.failed: str | None = None  # why it no longer follows: the caller reads the file itself
        self._offset = 0  # the byte after the last complete record read (0: the file's header not yet read)
        self._header: tuple[struct.Struct, float] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"follow {path.name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ends the reading thread (the summaries read so far stay)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def open_window(self) -> int | None:
        """A window opens here: the records so far, None when the capture is not followed."""
        with self._lock:
            self._read()
            if self.failed is not None:
                return None
            self.window = Summarizer(self.path)
            return self.records

    def close_window(self) -> tuple[WireSummary, int] | None:
        """The open window's summary and the records at its end (the file read up to now); None
        when the capture is no longer followed or no window is open."""
        with self._lock:
            self._read()
            window, self.window = self.window, None
            if self.failed is not None or window is None:
                return None
            return window.summary(), self.records

    def finish(self) -> WireSummary | None:
        """The whole file's summary once tcpdump has stopped (None: not followed to its end)."""
        self.stop()
        with self._lock:
            self._read()
            return None if self.failed is not None else self.case.summary()

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            with self._lock:
                self._read()
            if self.failed is not None:
                return

    def _read(self) -> None:
        """Feeds every complete record written since the last read (the caller holds the lock)."""
        if self.failed is not None:
            return
        if self._header is None and not self.path.exists():
            return  # tcpdump has not made the file yet
        try:
            with self.path.open("rb") as f:
                if self._header is None:
                    head = f.read(FILE_HEADER)
                    if len(head) < FILE_HEADER:
                        return  # tcpdump has not written its header yet
                    classic = classic_header(self.path, head)
                    if classic is None:
                        self.failed = f"{self.path}: not a classic pcap file"
                        return
                    self._header, self._offset = classic, FILE_HEADER
                f.seek(self._offset)
                buf = f.read()
        except (OSError, ValueError) as exc:
            self.failed = str(exc)
            return
        consumed, window = 0, self.window
        for data, ts, orig, after in classic_records(buf, *self._header):  # a record cut short waits
            self.case.feed(data, ts, orig)
            if window is not None:
                window.feed(data, ts, orig)
            self.records += 1
            consumed = after
        self._offset += consumed
