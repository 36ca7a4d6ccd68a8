"""The reconnection case's arithmetic: ping -D reply times, iperf 3 intervals on the wall clock,
when ping and the stream are back."""

import pytest

from hil.scenarios.recovery import Interval, back_at_rate, first_after, intervals_from_iperf3, reply_times

pytestmark = pytest.mark.selftest

PING = """PING 10.77.0.3 (10.77.0.3) 56(84) bytes of data.
[1700000000.100000] 64 bytes from 10.77.0.3: icmp_seq=1 ttl=64 time=0.120 ms
[1700000000.150000] 64 bytes from 10.77.0.3: icmp_seq=2 ttl=64 time=0.110 ms
[1700000001.900000] 64 bytes from 10.77.0.3: icmp_seq=37 ttl=64 time=0.130 ms
[1700000001.950000] From 10.77.0.1 icmp_seq=38 Destination Host Unreachable

--- 10.77.0.3 ping statistics ---
"""


def test_reply_times_and_the_first_after_the_link_came_back():
    times = reply_times(PING)
    assert times == [1700000000.1, 1700000000.15, 1700000001.9]  # an error line is not a reply
    assert first_after(times, 1700000001.0) == 1700000001.9
    assert first_after(times, 1700000002.0) is None


def test_stream_back_at_rate_is_the_end_of_the_first_full_interval_after_the_link_came_back():
    data = {"intervals": [{"sum": {"start": s / 10, "end": s / 10 + 0.1, "bits_per_second": bps}}
                          for s, bps in [(0, 94e6), (1, 0.0), (2, 40e6), (3, 93e6), (4, 94e6)]]}  # fmt: skip
    ivs = intervals_from_iperf3(data, started_at=100.0)
    assert ivs[3] == Interval(100.3, pytest.approx(100.4), 93.0)
    assert back_at_rate(ivs, moment=100.1, mbps=85.4) == pytest.approx(100.4)  # 40 Mbit/s is not back
    assert back_at_rate(ivs, moment=100.45, mbps=85.4) is None  # no interval starts after it at rate
    assert back_at_rate(ivs, moment=100.0, mbps=200.0) is None
