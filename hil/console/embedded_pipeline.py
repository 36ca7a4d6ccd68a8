"""pytest-embedded's console pipeline without its per-case process and its 50-ms nap.

pytest-embedded (2.9) carries a DUT's console to `dut.expect` in three hops: the serial port's
redirect thread reads the port and puts what it read on a queue (pytest-embedded-serial's
`_SerialRedirectThread`), a listener appends the queue's messages to the case's pexpect log file
and echoes complete lines to stdout (`_listen`), and `dut.expect` reads that file. Two of its
choices cost every case on the DUT time that is the suite's, not the DUT's:

- the listener is a Python interpreter spawned for each case (multiprocessing's `spawn`): about
  0.1 s of a core to start, and the DUT's first reply of the case waits for it (the case's
  `version`: 0.11 s, against 0.03 s for a round trip once it runs);
- the redirect thread sleeps 50 ms after every read of the port, so each console round trip
  waits 25 ms on average for its reply to be read, and a reply read in two pieces 50 ms more:
  about 0.17 s a case of the virtual bench (six round trips: `version`, `stats` four times, the
  traffic's command).

Here the listener is a thread of the test process doing the same job (`ConsoleListener`, given to
pytest-embedded by the `_listener` fixture in fixtures/embedded_pipeline.py), and the redirect
thread waits on the port itself instead of sleeping (`PromptSerialRedirect`). What reaches the
log file, stdout and `dut.expect` is unchanged but for the run's secrets, which the listener
replaces (hil.secrets: a stock shell echoes a passphrase it is sent); it also writes what is
still queued when the case closes it (the spawned one was killed)."""

from __future__ import annotations

import contextlib
import datetime
import os
import queue
import select
import threading
import time
from typing import Any, BinaryIO

import pytest_embedded.dut_factory as embedded_factory
import pytest_embedded_serial.serial as embedded_serial
from pytest_embedded.utils import to_str

from hil.secrets import HOLD_S, SecretFilter

POLL_S = 0.01  # how long the threads wait for bytes or messages before they look for their end


class ConsoleListener(threading.Thread):
    """pytest-embedded's `_listen`, as a thread: the queue's messages appended to the pexpect log
    file (what `dut.expect` reads) and complete lines echoed to stdout (with a timestamp, and the
    DUT's index when a test has several: `[dut-2] `). `close()` writes what is still queued, then
    ends it (pytest-embedded closes each case's objects with `close()`)."""

    def __init__(
        self, q: Any, filepath: str, with_timestamp: bool = True, count: int = 1, total: int = 1,
        _stdout_lock: Any = None,
    ) -> None:  # fmt: skip
        super().__init__(name=f"hil-console-listener-{count}", daemon=True)
        self.q = q
        self.filepath = filepath
        self.with_timestamp = with_timestamp
        self.prefix = f"[dut-{count}] " if total > 1 else ""
        self.stdout_lock = _stdout_lock
        self._closing = threading.Event()
        self._pending = ""
        self._line_start = True
        self._file: BinaryIO | None = None
        self._stdout_fd = -1
        self.secrets = SecretFilter()
        self._held_since = 0.0

    def start(self) -> None:
        # stdout as the stock listener's process inherits it when it starts: the file pytest's
        # capture holds at that moment (the case's output), whatever pytest does with fd 1 later
        self._stdout_fd = os.dup(1)
        super().start()

    def run(self) -> None:
        try:
            self._run()
        finally:
            os.close(self._stdout_fd)

    def _run(self) -> None:
        with open(self.filepath, "ab") as self._file:
            while True:
                try:
                    msg = self.q.get(timeout=POLL_S)
                except queue.Empty:
                    if self._closing.is_set():
                        return self._release()
                    if self.secrets.held and time.monotonic() - self._held_since > HOLD_S:
                        self._release()  # no secret followed the bytes held back
                    continue
                except Exception:  # the queue closed under it: the case is over
                    return self._release()
                if msg is None:  # close()'s: everything queued before it is written
                    return self._release()
                if msg:
                    held = bool(self.secrets.held)
                    data = self.secrets.feed(msg)  # the run's secrets never written (hil.secrets)
                    if self.secrets.held and not held:
                        self._held_since = time.monotonic()
                    if data:
                        self._forward(data)

    def _release(self) -> None:
        if data := self.secrets.flush():
            self._forward(data)

    def _forward(self, msg: bytes) -> None:
        assert self._file is not None
        self._file.write(msg)
        self._file.flush()
        text = to_str(msg)
        if not text:
            return
        prefix = self.prefix
        if self.with_timestamp:
            prefix = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S") + " " + prefix
        if self._line_start:
            text = prefix + text
        text = text.replace("\r\n", "\n")
        if text.endswith("\n"):
            self._line_start = True
            text = text[:-1].replace("\n", "\n" + prefix) + "\n"
            lock = self.stdout_lock if self.stdout_lock else contextlib.nullcontext()
            with lock, contextlib.suppress(OSError):
                os.write(self._stdout_fd, (self._pending + text).encode("utf-8", "replace"))
            self._pending = ""
        else:
            self._line_start = False
            self._pending += text.replace("\n", "\n" + prefix)

    def close(self) -> None:
        """Writes what is still queued, then ends (waits at most a few seconds)."""
        self._closing.set()
        with contextlib.suppress(Exception):  # (a queue already closed: the thread ends by itself)
            self.q.put(None)
        if self.is_alive() and self is not threading.current_thread():
            self.join(timeout=5)


class PromptSerialRedirect(embedded_serial._SerialRedirectThread):
    """pytest-embedded-serial's redirect thread, reading what the port has as soon as it has it:
    it waits on the port's file descriptor (up to POLL_S, then looks at its events) and takes
    every byte waiting, where the stock loop reads what is there and sleeps 50 ms. Its events
    (stop, start and end reading) and its handling of a lost port are the stock loop's."""

    def _event_loop(self) -> None:
        while True:
            try:
                event = self._event_q.get_nowait()
            except queue.Empty:
                event = "read"
            except OSError:
                return
            if event == "end":
                return
            if event in ("stop", "start"):
                self._block_reading = event == "stop"
                continue
            if self._block_reading:  # another reader has the port (a serial transfer): wait for it
                time.sleep(self._s.timeout or POLL_S)
                continue
            try:
                data = self._s.read_all() if self._readable() else None
            except Exception:  # the port lost or closed: the stock loop's own handling
                return super()._event_loop()
            if data == b"":  # readable without a byte: the other end hung up (a DUT that stopped)
                time.sleep(POLL_S)
            elif data:
                try:
                    self._q.put(data)
                except Exception:  # the queue closed: the case is over
                    return

    def _readable(self) -> bool:
        """Waits up to POLL_S for the port to have bytes (a port without a file descriptor, e.g. a
        network one: POLL_S, then whatever it has)."""
        try:
            fd = self._s.fileno()
        except Exception:
            time.sleep(POLL_S)
            return True
        return bool(select.select([fd], [], [], POLL_S)[0])


def thread_listener(
    msg_queue: Any, _pexpect_logfile: str, with_timestamp: bool, dut_index: int, dut_total: int,
    _stdout_lock: Any = None,
) -> ConsoleListener:  # fmt: skip
    """pytest-embedded's `_listener_gn` (what `DutFactory.create` starts for a DUT it opens
    itself, e.g. the second DUT of a pair: hil.behind) as a `ConsoleListener`."""
    os.makedirs(os.path.dirname(_pexpect_logfile), exist_ok=True)
    return ConsoleListener(msg_queue, _pexpect_logfile, with_timestamp, dut_index, dut_total, _stdout_lock)


def install() -> None:
    """pytest-embedded-serial starts `PromptSerialRedirect` for every port it opens from now on,
    and `DutFactory` a `ConsoleListener` for every DUT it creates (the `_listener` fixture gives
    the test's own DUT one: fixtures/embedded_pipeline.py)."""
    embedded_serial._SerialRedirectThread = PromptSerialRedirect  # type: ignore[misc]
    embedded_factory._listener_gn = thread_listener  # type: ignore[assignment]
