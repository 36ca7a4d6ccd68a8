"""RFC 6349's figures (hil.scenarios.rfc6349) from known inputs, the probe beside a transfer
(hil.tools.ping.BackgroundPing, a real ping on the loopback), the hosts' TCP counters, and the
bench shaper's queue bound the latency-under-load family checks against."""

from __future__ import annotations

import time

import pytest

from hil.plumbing.netns import TbfShaping
from hil.scenarios.families.loaded_latency import queue_bound_ms
from hil.scenarios.rfc6349 import (
    PathBaseline,
    SenderCount,
    buffer_delay_pct,
    capture_efficiency_pct,
    expected_window_figures,
    tcp_figures,
    transfer_time_ratio,
)
from hil.theory import tcp_goodput_mbps, window_limited_goodput_mbps
from hil.tools.ping import BackgroundPing, PingStats
from hil.traffic.endpoints import parse_tcp_segments

pytestmark = pytest.mark.selftest

SNMP = (
    "Ip: Forwarding DefaultTTL InReceives\nIp: 1 64 100\n"
    "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs "
    "OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
    "Tcp: 1 200 120000 -1 10 3 0 0 2 50000 42000 88 0 1 0\n"
    "Udp: InDatagrams NoPorts\nUdp: 5 0\n"
)


def test_the_rfc_example_figures() -> None:
    # RFC 6349 3.3.1's example: a 100 Mbit/s path of 5 ms RTT has a BDP of 62,500 bytes
    base = PathBaseline(5.0, 5.2, 20, 100.0, "the link")
    assert base.bdp_bytes == 62_500
    # 4.1: ideal 94.93 Mbit/s, measured 90: the transfer took 5.5 % longer than ideal
    assert transfer_time_ratio(94.93, 90.0) == pytest.approx(1.0548, abs=1e-4)
    # 4.2: 100,000 segments of which 1,000 sent again: 99 % efficient
    assert SenderCount(100_000, 1_000, "x").efficiency_pct == pytest.approx(99.0)
    # 4.3: baseline 25 ms, 32 ms during the transfer: 28 % buffer delay
    assert buffer_delay_pct(32.0, 25.0) == pytest.approx(28.0)
    assert capture_efficiency_pct(1_000_000, 990_000) == pytest.approx(99.0)
    assert capture_efficiency_pct(0, 0) is None


def test_figures_name_their_sources_and_what_is_missing() -> None:
    base = PathBaseline(0.2, 0.25, 20, 100.0, "the bench link's line rate")
    loaded = PingStats(4, 4, (1.0, 1.2, 1.4, 1.6))
    fig = tcp_figures(90.0, 94.93, base, loaded, SenderCount(10_000, 50, "the PC's TCP counters"), 99.5, {})
    assert fig.metrics["ttr"] == pytest.approx(1.0548, abs=1e-4)
    assert fig.metrics["tcp_efficiency_pct"] == pytest.approx(99.5)
    assert fig.metrics["loaded_rtt_ms"] == pytest.approx(1.3)
    assert fig.metrics["buffer_delay_pct"] == pytest.approx(550.0)
    assert fig.fields["capture_efficiency_pct"] == pytest.approx(99.5)
    assert "the PC's TCP counters" in fig.text() and not fig.missing
    bare = tcp_figures(90.0, 94.93, None, None, None, None,
                       {"baseline": "no reply", "sender": "the DUT's console reports no count"})  # fmt: skip
    assert set(bare.metrics) == {"ttr"}
    assert bare.missing["tcp_efficiency_pct"] == "the DUT's console reports no count"
    assert "no RTT during the transfer" in bare.missing["buffer_delay_pct"]
    assert "no tcp_efficiency_pct" in bare.headline()
    assert not bare.unanswered  # no probe summary at all: the bench's, not the path's
    # the probe ran through the transfer and the path answered none of it: withheld by the DUT
    silent = tcp_figures(90.0, 94.93, base, PingStats(40, 0, ()), None, None, {})
    assert silent.unanswered == {"buffer_delay_pct": "none of 40 pings answered during the transfer"}
    assert silent.as_fields()["unanswered"] == silent.unanswered and "buffer_delay_pct" in silent.missing
    # without a sender's count the capture upstream of the loss stands in, and says so
    from_capture = tcp_figures(90.0, 94.93, base, loaded, None, 98.0, {})
    assert from_capture.metrics["tcp_efficiency_pct"] == 98.0
    assert "capture" in str(from_capture.fields["sender"])


def test_the_window_ladder_expectations_follow_from_window_and_rtt() -> None:
    ideal = tcp_goodput_mbps(100, 1460)
    expected = window_limited_goodput_mbps(11_680, 20, 100, 1460)  # 8 x MSS, 20 ms one way
    fig = expected_window_figures(11_680, 20.4, ideal, expected)
    assert fig["ttr"] == pytest.approx(ideal / expected, rel=1e-3)  # about 20: a twentieth of the link
    assert fig["max_buffer_delay_pct"] == pytest.approx(100 * 11_680 * 8 / (ideal * 1e6) * 1000 / 20.4, abs=0.01)


def test_the_hosts_tcp_counters() -> None:
    assert parse_tcp_segments(SNMP) == {"OutSegs": 42000, "RetransSegs": 88}
    assert parse_tcp_segments("Ip: a\nIp: 1\n") is None
    assert parse_tcp_segments("Tcp: OutSegs RetransSegs\nTcp: 5 x\n") is None


def test_the_shapers_queue_bound() -> None:
    tbf = TbfShaping()  # 100 Mbit/s, 50 ms, 32 kbit burst, 24 bytes overhead a frame
    limit_bytes = 100e6 * 0.050 / 8 + 32_000 / 8
    expected = 1000 * (limit_bytes * 1538 / 1514 + 1538) * 8 / 100e6
    assert tbf.queue_ms() == pytest.approx(expected)
    assert 51.0 < tbf.queue_ms() < 51.5
    assert TbfShaping(rate_mbit=50).queue_ms() > tbf.queue_ms()  # the burst and a frame take longer
    with pytest.raises(ValueError, match="tc time"):
        TbfShaping(latency="fast").queue_ms()


def test_a_real_link_has_no_bound() -> None:
    bound, why = queue_bound_ms(object(), "both")  # type: ignore[arg-type]
    assert bound is None and "real link" in why


def test_the_probe_runs_beside_and_stops_with_its_summary() -> None:
    probe = BackgroundPing([], "127.0.0.1", expected_s=1.0, interval_s=0.05)
    t0 = time.monotonic()
    with probe:
        time.sleep(0.5)
    assert time.monotonic() - t0 < 3
    stats = probe.stats()
    assert stats.sent >= 5 and stats.received >= 5 and len(stats.rtts_ms) == stats.received
    assert probe.argv[-1] == "127.0.0.1" and "-w" in probe.argv  # it ends itself if never stopped
    # in whole seconds, which is all ping -w takes (a -n transfer's expected 0.88 s once made it refuse)
    odd = BackgroundPing([], "127.0.0.1", expected_s=0.8837)
    assert odd.argv[odd.argv.index("-w") + 1] == "61"
