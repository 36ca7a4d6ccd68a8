"""Two stream peers on loopback, started as the suite starts them on any host (hil.traffic.streams.
StreamPeerRun: the peer's own source given to a Python with -c, configuration on stdin): each
sends its streams to the other and counts what it receives; bad configurations are one line."""

from __future__ import annotations

import sys

import pytest

from hil.errors import BenchError
from hil.traffic.streams import StreamPeerRun, StreamSpec

pytestmark = pytest.mark.selftest

ONE = StreamSpec(id=41, direction="dut_tx", size=200, burst=4, period_ms=100, threshold_ms=150, gap_us=500)
TWO = StreamSpec(id=42, direction="dut_rx", size=900, burst=2, period_ms=50, threshold_ms=100, gap_us=200)


def config(send: list[StreamSpec], receive: list[StreamSpec]) -> dict:
    return {"send_to": "127.0.0.1", "duration_s": 1.0, "linger_s": 0.5,
            "send": [s.model_dump() for s in send], "receive": [s.model_dump() for s in receive]}  # fmt: skip


def test_two_peers_exchange_their_streams_and_count_every_packet() -> None:
    with (
        StreamPeerRun("a", [], sys.executable, config([ONE], [TWO])) as a,
        StreamPeerRun("b", [], sys.executable, config([TWO], [ONE])) as b,
    ):
        a.go()
        b.go()
        got_a, got_b = a.result(timeout_s=20), b.result(timeout_s=20)
    sent_one, received_one = got_a[str(ONE.id)], got_b[str(ONE.id)]
    assert sent_one["role"] == "sender" and received_one["role"] == "receiver"
    assert sent_one["sent"] == 10 * ONE.burst  # 1 s at 100 ms
    assert received_one["received"] == sent_one["sent"] and received_one["losses"] == {}
    assert got_b[str(TWO.id)]["sent"] == 20 * TWO.burst
    assert got_a[str(TWO.id)]["received"] == got_b[str(TWO.id)]["sent"]


def test_a_peer_that_cannot_bind_says_why_in_one_line() -> None:
    with (
        StreamPeerRun("first", [], sys.executable, config([], [ONE])),
        pytest.raises(BenchError, match=r"^second stream peer ended before `ready` .*Address already in use"),
    ):
        StreamPeerRun("second", [], sys.executable, config([], [ONE])).__enter__()


def test_a_missing_python_is_named() -> None:
    with pytest.raises(BenchError, match="x stream peer: program not found: no-such-python"):
        StreamPeerRun("x", [], "no-such-python", config([], [ONE])).__enter__()
