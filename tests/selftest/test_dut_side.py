"""The DUT's side of a measurement from its `stats` readings before and after
(hil.results.dut_side): CPU share of the window, TCP segment deltas, the tightest data-path pool,
the heap's low-water mark, and what a console does not report."""

from __future__ import annotations

from hil.results.dut_side import dut_side
from hil.scenarios.charts import dut_side_chart

BEFORE = {"cpu_busy_us": 1_000_000, "uptime_us": 10_000_000, "tcp_retrans": 5, "tcp_ooseq": 1, "tcp_rx_dup": 0,
          "pool_PBUF_POOL_avail": 128, "pool_PBUF_POOL_max": 3}  # fmt: skip
AFTER = {"cpu_busy_us": 1_500_000, "uptime_us": 12_000_000, "tcp_retrans": 9, "tcp_ooseq": 1, "tcp_rx_dup": 2,
         "pool_PBUF_POOL_avail": 128, "pool_PBUF_POOL_max": 20, "pool_TCP_SEG_avail": 256, "pool_TCP_SEG_max": 200,
         "pool_RAW_PCB_avail": 2, "pool_RAW_PCB_max": 2, "heap_avail": 131072, "heap_max": 30000}  # fmt: skip


def test_the_window_gives_cpu_share_segment_deltas_and_the_tightest_data_pool() -> None:
    side = dut_side(BEFORE, AFTER)
    assert side.metrics["dut_cpu_pct"] == 25.0  # 0.5 s busy of 2 s
    assert (side.metrics["dut_tcp_retrans"], side.metrics["dut_tcp_ooseq"], side.metrics["dut_tcp_rx_dup"]) == (4, 0, 2)
    # RAW_PCB is full but carries no data: the tightest data-path pool is TCP_SEG (56 free), not PBUF_POOL (108)
    assert side.lowest_pool == "TCP_SEG" and side.metrics["pool_free"] == 56
    assert side.pools["RAW_PCB"] == {"size": 2, "most_used": 2, "least_free": 0}
    assert side.metrics["heap_free"] == 131072 - 30000
    assert side.missing == ()
    assert "DUT CPU 25.0 %" in side.headline() and "fewest free TCP_SEG 56" in side.text()


def test_a_counter_that_went_down_counts_from_its_reset_and_missing_figures_are_named() -> None:
    side = dut_side({"tcp_retrans": 50, "cpu_busy_us": 9}, {"tcp_retrans": 3, "tcp_ooseq": 7})  # `stats reset`
    assert side.metrics == {"dut_tcp_retrans": 3.0}  # tcp_ooseq: no reading before, a since-boot value
    assert side.missing == ("CPU load", "TCP segments received out of sequence", "pool low-water marks",
                            "heap low-water mark")  # fmt: skip
    assert "not reported: CPU load" in side.headline()


def test_the_chart_shows_the_points_or_nothing() -> None:
    points = [(1.0, dut_side(BEFORE, AFTER).metrics), (2.0, {"dut_cpu_pct": 40.0})]
    png = dut_side_chart("DUT side", "x", points)
    assert png is not None and png.startswith(b"\x89PNG")
    assert dut_side_chart("DUT side", "x", [(1.0, {"mbps": 3.0})]) is None


def test_cpu_over_the_traffic_time_and_no_tcp_counts_for_a_dut_in_the_path() -> None:
    # 0.5 s busy in 2 s between the readings, of which 1 s was traffic: 50 % load while it ran
    assert dut_side(BEFORE, AFTER, traffic_s=1.0).metrics["dut_cpu_pct"] == 50.0
    assert dut_side(BEFORE, AFTER, traffic_s=5.0).metrics["dut_cpu_pct"] == 25.0  # never beyond the readings
    forwarding = dut_side(BEFORE, AFTER, tcp=False)
    assert not any(k.startswith("dut_tcp") for k in forwarding.metrics) and forwarding.missing == ()
