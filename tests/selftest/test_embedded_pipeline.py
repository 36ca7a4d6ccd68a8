"""pytest-embedded's console pipeline as the suite runs it (hil/console/embedded_pipeline.py): the
serial port pytest-embedded-serial opens is read by the suite's redirect thread, which hands on
every byte a pseudo-terminal carries, in order, pauses while another reader has the port and ends
on its `end` event; the listener thread writes what the queue carries to the pexpect log file,
echoes complete lines to the stdout it was started with (timestamped, `[dut-N] ` with several
DUTs), and writes what is still queued when it is closed; a port whose other end hung up is not
spun on."""

from __future__ import annotations

import os
import pty
import queue
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial as pyserial
from pytest_embedded_serial.serial import Serial

from hil.console.embedded_pipeline import ConsoleListener, PromptSerialRedirect, install

pytestmark = pytest.mark.selftest


class ListQueue:
    """What the redirect thread puts on pytest-embedded's message queue, kept in order."""

    def __init__(self) -> None:
        self.items: queue.Queue[bytes] = queue.Queue()

    def put(self, obj: bytes) -> None:
        if obj:
            self.items.put(obj)

    def received(self, size: int, within_s: float = 5.0) -> bytes:
        got, deadline = b"", time.monotonic() + within_s
        while len(got) < size and time.monotonic() < deadline:
            try:
                got += self.items.get(timeout=0.05)
            except queue.Empty:
                continue
        return got


@pytest.fixture
def pseudo_terminal() -> Iterator[tuple[int, str]]:
    """The DUT's end of a pseudo-terminal (its fd) and the name of the PC's end."""
    dut_end, pc_end = pty.openpty()
    try:
        yield dut_end, os.ttyname(pc_end)
    finally:
        os.close(dut_end)
        os.close(pc_end)


def test_the_port_pytest_embedded_opens_is_read_by_the_suites_thread_every_byte_in_order(
    pseudo_terminal: tuple[int, str],
) -> None:
    dut_end, name = pseudo_terminal
    install()
    q = ListQueue()
    port = Serial(q, port=name)  # type: ignore[arg-type]  # pytest-embedded-serial's own class
    try:
        assert type(port._redirect_thread) is PromptSerialRedirect
        sent = b"".join(f"RESULT line {i} {'x' * (i % 97)}\r\n".encode() for i in range(400))
        for i in range(0, len(sent), 333):  # in pieces, as a firmware prints
            os.write(dut_end, sent[i : i + 333])
        assert q.received(len(sent)) == sent
        port._redirect_thread.stop_reading()  # another reader takes the port (a serial transfer)
        time.sleep(0.1)
        os.write(dut_end, b"for the other reader\r\n")
        time.sleep(0.1)
        assert q.items.empty()
        assert port.proc.read(port.proc.in_waiting) == b"for the other reader\r\n"
        port._redirect_thread.start_reading()
        os.write(dut_end, b"back\r\n")
        assert q.received(6) == b"back\r\n"
    finally:
        port.close()
    assert not port._redirect_thread.is_alive()


def test_the_listener_writes_the_log_and_echoes_lines_then_what_was_queued_when_closed(tmp_path: Path) -> None:
    q: queue.Queue[bytes | None] = queue.Queue()
    log, echo = tmp_path / "dut.log", tmp_path / "stdout"
    saved = os.dup(1)
    with echo.open("wb") as out:  # the stdout it starts with is where it echoes, whatever comes after
        os.dup2(out.fileno(), 1)
        try:
            listener = ConsoleListener(q, str(log), with_timestamp=False, count=2, total=2)
            listener.start()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    q.put(b"RESULT version name=hil-fw\r\nhalf ")
    q.put(b"a line\r\n")
    for i in range(200):  # still queued when the case closes it
        q.put(f"line {i}\r\n".encode())
    listener.close()
    assert not listener.is_alive()
    want = b"RESULT version name=hil-fw\r\nhalf a line\r\n" + b"".join(f"line {i}\r\n".encode() for i in range(200))
    assert log.read_bytes() == want
    lines = echo.read_text().splitlines()
    assert lines[:2] == ["[dut-2] RESULT version name=hil-fw", "[dut-2] half a line"]
    assert lines[-1] == "[dut-2] line 199" and len(lines) == 202


def test_a_listener_closed_with_its_queue_gone_ends(tmp_path: Path) -> None:
    class Closed:
        def get(self, timeout: float) -> bytes:
            raise OSError("handle is closed")

        def put(self, obj: object) -> None:
            raise OSError("handle is closed")

    listener = ConsoleListener(Closed(), str(tmp_path / "dut.log"))
    listener.start()
    listener.close()
    assert not listener.is_alive()


def test_a_port_that_goes_away_ends_the_thread_as_the_stock_loop_does(pseudo_terminal: tuple[int, str]) -> None:
    _, name = pseudo_terminal
    port = pyserial.serial_for_url(name, timeout=0.05)
    thread = PromptSerialRedirect(ListQueue(), port)  # type: ignore[arg-type]
    thread.start()
    port.close()  # the stock loop's handling: an OSError on a closed port ends it
    thread.join(timeout=10)
    assert not thread.is_alive()


def test_a_port_readable_with_nothing_to_read_is_waited_on_not_spun_on() -> None:
    """A port whose descriptor says readable while it has no byte (its other end gone, as a
    pseudo-terminal whose DUT stopped may): the thread waits between looks, as the stock loop's
    50 ms did, instead of taking a core."""
    read_end, write_end = os.pipe()
    os.close(write_end)  # end of file: readable for ever, nothing to read

    class HungUp:
        timeout = 0.05

        def fileno(self) -> int:
            return read_end

        def read_all(self) -> bytes:
            return b""

    thread = PromptSerialRedirect(ListQueue(), HungUp())  # type: ignore[arg-type]
    thread.start()
    try:
        cpu_before, began = time.process_time(), time.monotonic()
        time.sleep(0.5)
        share = (time.process_time() - cpu_before) / (time.monotonic() - began)
        assert share < 0.5, f"the thread took {share:.0%} of a core on a port with nothing to read"
    finally:
        thread.terminate()
        os.close(read_end)
    assert not thread.is_alive()
