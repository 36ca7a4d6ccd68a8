import pytest

from hil.console.protocol import parse_final_line
from hil.tools.ping import parse_console, parse_iputils, percentile

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
    assert (s.min_ms, s.max_ms, s.mdev_ms) == (0.05, 2.1, 0.1)


CONSOLE_FINAL = ("RESULT ping status=ok target=10.77.0.1 size=56 sent=2 received=1 loss_pct=50.0000 min_ms=0.722 "
                 "avg_ms=0.722 max_ms=0.722 mdev_ms=0.000")  # fmt: skip


def test_console_ping_lines():
    lines = ["64 bytes from 10.77.0.1: icmp_seq=1 ttl=64 time=0.722 ms", "Request timeout for icmp_seq=2"]
    final = parse_final_line(CONSOLE_FINAL)
    assert final is not None
    s = parse_console(lines, final)
    assert s.rtts_ms == (0.722,) and s.loss_pct == 50.0 and (s.sent, s.received) == (2, 1)


def test_console_flood_is_its_final_line():
    """`ping -q`: no reply lines; min/avg/max/mdev come from the final line."""
    final = parse_final_line("RESULT ping status=ok target=10.77.0.1 size=1440 sent=2000 received=1999 "
                             "loss_pct=0.0500 min_ms=0.004 avg_ms=0.037 max_ms=0.722 mdev_ms=0.021")  # fmt: skip
    assert final is not None
    s = parse_console(["PING 10.77.0.1: 1440 data bytes"], final)
    assert s.rtts_ms == () and (s.avg_ms, s.min_ms, s.max_ms, s.mdev_ms) == (0.037, 0.004, 0.722, 0.021)
    nothing = parse_final_line("RESULT ping status=ok target=10.77.0.1 size=56 sent=3 received=0 loss_pct=100.0000 "
                               "min_ms=0.000 avg_ms=0.000 max_ms=0.000 mdev_ms=0.000")  # fmt: skip
    assert nothing is not None and parse_console([], nothing).avg_ms is None  # no reply: no round-trip time


def test_percentile_nearest_rank():
    assert percentile([5, 1, 4, 2, 3], 50) == 3
    assert percentile(list(range(1, 101)), 99) == 99
    with pytest.raises(ValueError):
        percentile([], 99)
    with pytest.raises(ValueError):
        parse_iputils("ping: unknown host")
