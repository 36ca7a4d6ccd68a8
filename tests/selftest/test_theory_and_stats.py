import pytest

from hil.stats import summarize
from hil.theory import (
    efficiency_pct,
    frame_rate_fps,
    tcp_goodput_mbps,
    udp_frame_bytes,
    udp_goodput_mbps,
    window_limited_goodput_mbps,
)

pytestmark = pytest.mark.selftest


def test_tcp_goodput_on_100base_tx():
    assert tcp_goodput_mbps(100, 1460) == pytest.approx(100 * 1460 / 1538)
    assert tcp_goodput_mbps(100, 536) == pytest.approx(100 * 536 / 614)
    assert tcp_goodput_mbps(100, 1460, tcp_options=12) == pytest.approx(100 * 1448 / 1538)


def test_udp_goodput_and_padding():
    assert udp_goodput_mbps(100, 1472) == pytest.approx(100 * 1472 / 1538)
    # an 18-byte payload is padded to the 46-byte Ethernet minimum
    assert udp_goodput_mbps(100, 18) == pytest.approx(100 * 18 / (46 + 38))


@pytest.mark.parametrize(
    ("frame", "fps"),  # RFC 2544 appendix A.1's maximum frame rates for 10 Mb/s Ethernet, x 10
    [(64, 148_810), (128, 84_459), (256, 45_290), (512, 23_496), (1024, 11_973), (1280, 9_615), (1518, 8_127)],
)
def test_rfc2544_frame_rates_on_100base_tx(frame: int, fps: int):
    assert frame_rate_fps(100, frame) == pytest.approx(fps, abs=1)


def test_udp_datagrams_frame_sizes():
    assert udp_frame_bytes(1448) == 1494 and udp_frame_bytes(1472) == 1518 and udp_frame_bytes(18) == 64
    assert udp_frame_bytes(1) == 64  # padded to the minimum frame
    # a frame's goodput at its theoretical rate is the UDP goodput formula's
    assert frame_rate_fps(100, udp_frame_bytes(500)) * 500 * 8 / 1e6 == pytest.approx(udp_goodput_mbps(100, 500))


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError):
        tcp_goodput_mbps(100, 0)
    with pytest.raises(ValueError):
        udp_goodput_mbps(0, 1470)


def test_window_limited_goodput_is_one_window_per_round_trip():
    # 2 x 1460 B per (20 ms + a 1538-byte segment and an 84-byte ACK at 100 Mbit/s)
    rtt_s = 0.020 + (1538 + 84) * 8 / 100e6
    assert window_limited_goodput_mbps(2920, 20, 100) == pytest.approx(2920 * 8 / rtt_s / 1e6)
    assert window_limited_goodput_mbps(2920, 20, 100) == pytest.approx(1.16, abs=0.005)
    assert window_limited_goodput_mbps(16 * 1460, 20, 100) == pytest.approx(9.28, abs=0.01)
    # a window larger than the bandwidth-delay product: the link's rate, not more
    assert window_limited_goodput_mbps(10_000_000, 1, 100) == pytest.approx(tcp_goodput_mbps(100, 1460))
    with pytest.raises(ValueError):
        window_limited_goodput_mbps(2920, 0, 100)


def test_efficiency():
    assert efficiency_pct(93.0, 94.93) == pytest.approx(97.97, abs=0.01)


def test_summary_median_and_spread():
    s = summarize([94.0, 93.0, 95.0])
    assert (s.median, s.minimum, s.maximum) == (94.0, 93.0, 95.0) and s.stdev == pytest.approx(1.0)
    assert summarize([5.0]).stdev == 0.0
    with pytest.raises(ValueError):
        summarize([])
