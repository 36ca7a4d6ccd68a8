"""iperf 3 on loopback: JSON parsing, a real client/server run, and a clean server kill."""

import json

import pytest

from hil.errors import BenchError
from hil.tools.iperf3 import Iperf3ClientArgs, Iperf3Server, parse_bidir_json, parse_json, run_client
from hil.traffic.roles import parse_ss_mss

pytestmark = pytest.mark.selftest

TCP = {
    "end": {
        "sum_sent": {"seconds": 1.0, "bytes": 10485760, "bits_per_second": 95e6, "retransmits": 2},
        "sum_received": {"seconds": 1.0, "bytes": 10444424, "bits_per_second": 94e6},
    }
}
UDP = {"end": {"sum": {"seconds": 2.0, "bits_per_second": 50e6, "jitter_ms": 0.01, "lost_packets": 3,
                       "packets": 1000, "lost_percent": 0.3}}}  # fmt: skip


def test_parse_tcp_and_udp():
    t = parse_json(json.dumps(TCP))
    assert t.sender_mbps == 95 and t.receiver_mbps == 94 and t.retransmits == 2
    assert (t.sent_bytes, t.bytes) == (10485760, 10444424)  # the server stops counting at the test's end
    u = parse_json(json.dumps(UDP))
    assert u.lost_percent == 0.3 and u.packets == 1000 and u.jitter_ms == 0.01


def test_parse_bidir_gives_each_direction_its_receiver():
    def direction(mbps: float, lost: int) -> dict:
        return {"seconds": 2.0, "bits_per_second": mbps * 1e6, "lost_packets": lost, "packets": 1000, "jitter_ms": 0.1}

    end = {"sum_sent": direction(90, 0), "sum_received": direction(89, 14), "sum": direction(89, 14),
           "sum_sent_bidir_reverse": direction(80, 0), "sum_received_bidir_reverse": direction(79, 3),
           "sum_bidir_reverse": direction(79, 3)}  # fmt: skip
    data = {"start": {"test_start": {"protocol": "UDP"}}, "end": end}
    down, up = parse_bidir_json(json.dumps(data))
    assert (down.receiver_mbps, down.lost_packets) == (89, 14) and (up.receiver_mbps, up.lost_packets) == (79, 3)
    with pytest.raises(BenchError, match="not a --bidir test"):
        parse_bidir_json(json.dumps({"end": {"sum": direction(1, 0)}, "start": {"test_start": {"protocol": "UDP"}}}))


def test_errors_are_bench_errors():
    with pytest.raises(BenchError, match="iperf3: unable to connect"):
        parse_json('{"error": "unable to connect to server: Connection refused"}')
    with pytest.raises(BenchError, match="no JSON"):
        parse_json("garbage")
    with pytest.raises(BenchError, match="no JSON"):
        parse_json('warning: something\n{\n\t"start": {')  # cut short


def test_a_warning_before_the_json_is_skipped():
    """A peer over SSH: iperf 3's stderr comes in the same stream, before its JSON."""
    text = "warning: UDP block size 1470 exceeds TCP MSS 1448, may result in fragmentation / drops\n"
    t = parse_json(text + json.dumps(TCP, indent="\t"))
    assert t.receiver_mbps == 94


def test_udp_always_has_a_rate():
    argv = Iperf3ClientArgs(host="h", udp=True).argv()
    assert argv[argv.index("-b") + 1] == "1M" and "-C" not in argv


def test_client_length_amount_and_mss():
    """iperf 3 counts -t in whole seconds (0.5 would be cut to 0: a test without end)."""
    argv = Iperf3ClientArgs(host="h", duration_s=0.5).argv()
    assert argv[argv.index("-t") + 1] == "1"
    assert Iperf3ClientArgs(host="h", duration_s=2.2).argv()[argv.index("-t") + 1] == "3"
    argv = Iperf3ClientArgs(host="h", amount="10485760", mss=536).argv()
    assert "-t" not in argv and argv[argv.index("-n") + 1] == "10485760" and argv[argv.index("-M") + 1] == "536"
    assert "-M" not in Iperf3ClientArgs(host="h", udp=True, mss=536).argv()


def test_tcp_client_names_its_congestion_control():
    argv = Iperf3ClientArgs(host="h").argv()
    assert argv[argv.index("-C") + 1] == "cubic"
    assert "-C" not in Iperf3ClientArgs(host="h", congestion=None).argv()


def test_real_run_on_loopback(tmp_path):
    with Iperf3Server([], port=5299, log_path=tmp_path / "server.json") as srv:
        args = Iperf3ClientArgs(host="127.0.0.1", port=5299, duration_s=1, congestion=None)  # may run rootless
        result, raw = run_client([], args, timeout_s=20)
        proc = srv.process
    assert result.receiver_mbps > 10 and '"end"' in raw
    assert proc is not None and proc.poll() is not None  # the server is gone


def test_observed_mss_is_the_data_connections_not_the_control_connections():
    ss = (
        "State Recv-Q Send-Q Local Address:Port Peer Address:Port\n"
        "ESTAB 0 0 10.77.0.1:40000 10.77.0.3:5001\n"
        "\t cubic mss:1448 rcvmss:536 bytes_sent:180 bytes_acked:181 bytes_received:4\n"
        "ESTAB 0 0 10.77.0.1:40002 10.77.0.3:5001\n"
        "\t cubic mss:536 rcvmss:536 bytes_sent:10485760 bytes_acked:10400000 bytes_received:0\n"
    )
    assert parse_ss_mss(ss, pc_sends=True) == 536
    assert parse_ss_mss(ss.replace("bytes_received:0", "bytes_received:9000000"), pc_sends=False) == 536
    assert parse_ss_mss("no connection", pc_sends=True) is None
