"""A host's stream peer's sender: packets go out at their burst's spacing, and a sender that fell
behind its schedule (descheduled mid-burst, then sending the rest back to back) says so."""

from __future__ import annotations

import pytest

from hil.traffic.stream_peer import Sender, Stream

pytestmark = pytest.mark.selftest


class CountingSocket:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, data: bytes) -> int:
        self.sent.append(data)
        return len(data)


def sender(gap_us: int = 100) -> Sender:
    spec = Stream(id=7, size=1400, burst=30, period_ms=100, gap_us=gap_us, threshold_ms=50)
    return Sender(spec, CountingSocket(), start=10.0, stop=11.0)  # type: ignore[arg-type]


def test_a_sender_on_time_is_never_behind() -> None:
    s = sender()
    for i in range(30):
        s.send_due(10.0 + i * 100e-6)
    assert s.sent == 30 and s.behind == 0 and s.max_behind_us < 1


def test_a_sender_descheduled_mid_burst_counts_the_packets_it_sent_late() -> None:
    s = sender()
    for i in range(5):
        s.send_due(10.0 + i * 100e-6)
    s.send_due(10.0 + 0.005)  # 5 ms later: the other 25 packets of the burst go out at once
    assert s.sent == 30
    assert s.behind == 25  # due at 0.5 ... 2.9 ms into the burst, all sent at 5 ms: 4.5 ... 2.1 ms late
    assert 4400 <= s.max_behind_us <= 4600
    assert s.compressed == {0}  # burst 0 went out compressed; the next one is on time
    for i in range(30):
        s.send_due(10.1 + i * 100e-6)
    assert s.compressed == {0} and s.sent == 60


def test_a_burst_started_late_goes_out_compressed_and_counts() -> None:
    """The schedule is absolute: 3 ms late, the burst's first 29 packets are all due and go out
    together; those more than one gap (and 200 us) late count, its first packet does not."""
    s = sender()
    s.send_due(10.003)
    assert s.sent == 30 and s.behind == 27 and s.max_behind_us == pytest.approx(3000, abs=1)
