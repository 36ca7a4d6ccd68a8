"""The run's secrets never written by the console pipeline (hil.secrets): a passphrase the run
read is replaced in the console's bytes, also when the port delivered it in pieces, and in its
hex form; a tail that could start it is held back until the rest shows it is not one."""

from __future__ import annotations

import queue
from pathlib import Path

import pytest

from hil.console.embedded_pipeline import ConsoleListener
from hil.secrets import HIDDEN, SecretFilter, register

pytestmark = pytest.mark.selftest

PSK = "Secret-Pass-42"


def test_a_passphrase_split_across_reads_is_hidden_and_the_rest_written() -> None:
    register(PSK)
    f = SecretFilter()
    out = f.feed(b"iperf> ap hil-pair Secr") + f.feed(b"et-Pa") + f.feed(b"ss-42\r\nI (1) cmd_wifi: AP mode, hil-pair ")
    out += f.feed(PSK.encode() + b"\r\n") + f.flush()
    assert PSK.encode() not in out and out.count(HIDDEN) == 2
    assert out == b"iperf> ap hil-pair " + HIDDEN + b"\r\nI (1) cmd_wifi: AP mode, hil-pair " + HIDDEN + b"\r\n"


def test_the_hex_form_is_hidden_and_a_start_that_is_no_secret_is_written() -> None:
    register(PSK)
    f = SecretFilter()
    assert f.feed(b"wifi connect 6869 " + PSK.encode().hex().encode() + b"\n") == b"wifi connect 6869 " + HIDDEN + b"\n"
    assert f.feed(b"ends with Sec") == b"ends with "  # may start the secret: held back
    assert f.feed(b"ond line\n") == b"Second line\n"  # it did not


def test_the_listener_writes_neither_the_log_file_nor_stdout_with_the_secret(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    register(PSK)
    q: queue.Queue[bytes | None] = queue.Queue()
    log = tmp_path / "dut.log"
    listener = ConsoleListener(q, str(log))
    listener.start()
    for piece in (b"iperf> sta hil-pair Se", b"cret-Pass-", b"42\r\n", b"done\r\n"):
        q.put(piece)
    listener.close()
    written = log.read_bytes()
    assert PSK.encode() not in written and HIDDEN in written and written.endswith(b"done\r\n")
    out = capfd.readouterr().out
    assert PSK not in out and "sta hil-pair <psk hidden>" in out
