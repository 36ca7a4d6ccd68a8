import pytest

from hil.scenarios.latency import parse_console, parse_iputils, percentile

pytestmark = pytest.mark.selftest

IPUTILS = """PING 10.77.0.2 (10.77.0.2) 56(84) bytes of data.
64 bytes from 10.77.0.2: icmp_seq=1 ttl=255 time=0.091 ms
64 bytes from 10.77.0.2: icmp_seq=2 ttl=255 time=0.120 ms

--- 10.77.0.2 ping statistics ---
3 packets transmitted, 2 received, 33.3333% packet loss, time 401ms
rtt min/avg/max/mdev = 0.091/0.105/0.120/0.014 ms
"""
FLOOD = """--- 10.77.0.2 ping statistics ---
79582 packets transmitted, 79581 received, 0.00125659% packet loss, time 60000ms
rtt min/avg/max/mdev = 0.050/0.707/2.100/0.100 ms, ipg/ewma 0.754/0.701 ms
"""


def test_iputils_summary_and_replies():
    s = parse_iputils(IPUTILS)
    assert (s.sent, s.received, s.rtts_ms, s.avg_ms) == (3, 2, (0.091, 0.120), 0.105)
    assert s.loss_pct == pytest.approx(33.333, abs=0.001)


def test_flood_summary_without_replies():
    s = parse_iputils(FLOOD)
    assert s.sent == 79582 and s.received == 79581 and s.rtts_ms == () and s.avg_ms == 0.707


def test_console_ping_lines():
    lines = ["64 bytes from 10.77.0.1: icmp_seq=1 ttl=64 time=0.722 ms", "Request timeout for icmp_seq=2"]
    s = parse_console(lines, sent=2, received=1)
    assert s.rtts_ms == (0.722,) and s.loss_pct == 50.0


def test_percentile_nearest_rank():
    assert percentile([5, 1, 4, 2, 3], 50) == 3
    assert percentile(list(range(1, 101)), 99) == 99
    with pytest.raises(ValueError):
        percentile([], 99)
    with pytest.raises(ValueError):
        parse_iputils("ping: unknown host")
