"""Traffic endpoints (hil.traffic.endpoints): a flow from one endpoint to another returns both
sides' numbers whatever sits behind them; iperf 3 runs behind the same interface as iperf 2, its
JSON kept whole. Real traffic on loopback between two host endpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hil.errors import BenchError
from hil.traffic.endpoints import FlowSpec, HostEndpoint, common_generator, iperf3_details, run_flow

pytestmark = pytest.mark.selftest


def hosts(tmp_path: Path) -> tuple[HostEndpoint, HostEndpoint]:
    # congestion None: may run rootless (setting it needs CAP_NET_ADMIN for some algorithms)
    a = HostEndpoint("PC", [], "127.0.0.1", tmp_path / "a", tcp_congestion=None)
    b = HostEndpoint("peer", [], "127.0.0.1", tmp_path / "b", tcp_congestion=None)
    return a, b


@pytest.mark.parametrize("generator", ["iperf2", "iperf3"])
def test_tcp_flow_between_two_hosts_gives_both_sides(tmp_path: Path, generator: str) -> None:
    a, b = hosts(tmp_path)
    flow = run_flow(a, b, FlowSpec("tcp", 1.0, port=5297), generator)  # type: ignore[arg-type]
    assert flow.generator == generator
    assert flow.receiver.mbps > 10 and flow.sender.mbps > 10
    if generator == "iperf3":
        raw = flow.raw["pc iperf3 client JSON"]
        assert json.loads(raw)["end"]["sum_received"]["bytes"] > 0  # the JSON, whole
        assert "peer iperf3 server JSON" in flow.raw
        assert {"retransmits", "cpu_local_pct", "cpu_remote_pct"} <= set(flow.sender.details)
    else:
        assert "pc iperf2 client" in flow.raw and "peer iperf2 server" in flow.raw


def test_udp_flow_with_iperf3_reports_loss_and_jitter(tmp_path: Path) -> None:
    a, b = hosts(tmp_path)
    flow = run_flow(a, b, FlowSpec("udp", 1.0, port=5296, length=1200, rate_mbps=20.0), "iperf3")
    assert flow.receiver.datagrams and flow.receiver.datagrams > 1000
    assert flow.receiver.lost is not None and flow.receiver.jitter_ms is not None
    assert 15.0 < flow.sender.mbps < 25.0


class _ConsoleOnly:
    name = "DUT"
    ip = "10.0.0.2"
    generators = ("iperf2",)


def test_endpoints_without_a_common_generator_are_one_clear_error(tmp_path: Path) -> None:
    a, _ = hosts(tmp_path)
    assert common_generator(a, _ConsoleOnly()) == "iperf2"  # type: ignore[arg-type]
    with pytest.raises(BenchError, match=r"PC \(iperf2, iperf3\) and DUT \(iperf2\) do not both speak iperf3"):
        common_generator(a, _ConsoleOnly(), "iperf3")  # type: ignore[arg-type]


def test_iperf3_details_from_its_json() -> None:
    data = {
        "intervals": [{"streams": [{"snd_cwnd": 1000}]}, {"streams": [{"snd_cwnd": 5000}]}],
        "end": {
            "sum_sent": {"retransmits": 3},
            "streams": [{"sender": {"max_rtt": 1500}}],
            "cpu_utilization_percent": {"host_total": 12.345, "remote_total": 6.7},
        },
    }
    assert iperf3_details(data) == {
        "retransmits": 3.0, "max_cwnd_bytes": 5000.0, "max_rtt_ms": 1.5, "cpu_local_pct": 12.35, "cpu_remote_pct": 6.7,
    }  # fmt: skip
