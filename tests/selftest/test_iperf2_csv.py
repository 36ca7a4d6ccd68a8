import pytest

from hil.errors import BenchError
from hil.tools.iperf2 import Iperf2ClientArgs, Iperf2Server, parse_csv_records, run_client, summary_record
from hil.traffic.endpoints import parse_udp_rcvbuf_errors
from hil.traffic.roles import TrafficResult, TrafficSpec, dut_loss_pct

pytestmark = pytest.mark.selftest

# Records as iperf 2.1.8 prints them with -y C (captured on the virtual bench).
TCP = "19700101000000,10.77.0.1,35038,10.77.0.2,5001,1,0.0-3.0,423362620,1127016121\n"
UDP_SERVER = (
    "19700101000000,10.77.0.1,35569,10.77.0.2,5001,1,0.0-1.0,26214400,209715200,0.010,0,17832,0.000,0\n"
    "19700101000000,10.77.0.2,53357,10.77.0.1,5001,1,0.0-3.0,39322500,104866746,0.005,3,26750,0.011,1\n"
)
UDP_CLIENT = "19700101000000,127.0.0.1,35191,127.0.0.1,5001,1,0.0-1.0,1255380,10022443,0.000,0,-1,-0.000,0\n"


def test_tcp_record():
    r = summary_record(TCP)
    assert r.bytes == 423362620 and r.mbps == pytest.approx(1127.016121) and r.duration_s == pytest.approx(3.0)
    assert r.lost is None and r.loss_pct is None


def test_udp_summary_is_the_longest_interval():
    r = summary_record(UDP_SERVER)
    assert r.duration_s == pytest.approx(3.0) and r.lost == 3 and r.total == 26750 and r.out_of_order == 1
    assert r.loss_pct == pytest.approx(100 * 3 / 26750) and r.jitter_ms == pytest.approx(0.005)


def test_udp_client_record_has_no_loss_figure():
    assert summary_record(UDP_CLIENT).loss_pct is None


def test_noise_is_ignored_and_no_record_is_an_error():
    assert parse_csv_records("WARNING: did not receive ack of last datagram after 10 tries.\n" + TCP)
    with pytest.raises(BenchError, match="iperf printed no result"):
        summary_record("connect failed: Connection refused\n")


def test_udp_client_always_has_an_explicit_rate():
    argv = Iperf2ClientArgs(host="10.77.0.2", udp=True).argv()
    assert "-b" in argv and argv[argv.index("-b") + 1] == "1m"
    argv = Iperf2ClientArgs(host="10.77.0.2", udp=True, bandwidth="95m", length=1448, duration_s=3).argv()
    assert argv[argv.index("-b") + 1] == "95m" and "-l" in argv and "-t" in argv
    assert "-n" in Iperf2ClientArgs(host="h", amount="100M").argv()


def test_tcp_client_names_its_congestion_control():
    """The PC's TCP sender uses the bench's congestion control, not the host's default."""
    argv = Iperf2ClientArgs(host="h").argv()
    assert argv[argv.index("-Z") + 1] == "cubic"
    assert "-Z" not in Iperf2ClientArgs(host="h", congestion=None).argv()
    assert "-Z" not in Iperf2ClientArgs(host="h", udp=True, bandwidth="1m").argv()


def test_congestion_control_the_host_refuses_is_a_bench_error(tmp_path):
    """iperf 2 goes on with the host's default when -Z fails: the run must not."""
    with Iperf2Server([], udp=False, port=5298, log_path=tmp_path / "server.csv"):
        args = Iperf2ClientArgs(host="127.0.0.1", port=5298, duration_s=0.5, congestion="nosuch")
        with pytest.raises(BenchError, match=r"the PC's TCP congestion control 'nosuch' could not be set \(No such"):
            run_client([], args, timeout_s=20)


SNMP = """Ip: Forwarding DefaultTTL InReceives
Ip: 2 64 100
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 9000 0 37 12 37 0 0 0 0
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
UdpLite: 0 0 0 0 5 0 0 0 0
"""


def test_pc_socket_drops_are_read_and_left_out_of_the_dut_loss() -> None:
    assert parse_udp_rcvbuf_errors(SNMP) == 37  # Udp's, not UdpLite's
    assert parse_udp_rcvbuf_errors("Ip: Forwarding\nIp: 2\n") == 0
    spec = TrafficSpec("udp", "dut_tx", 1.0, rate_mbps=10)
    r = TrafficResult(spec, receiver_mbps=9.9, sender_mbps=10.0, lost=50, datagrams=10_000, pc_receive_drops=37)
    assert dut_loss_pct(r) == pytest.approx(0.13)  # 13 of 10,000 lost by the link and the DUT
    r.pc_receive_drops = 80  # more dropped at the PC than iperf counted lost (reordering): never negative
    assert dut_loss_pct(r) == 0.0


def test_a_start_up_jitter_from_a_sender_with_its_own_clock_is_no_figure() -> None:
    """iperf 2's server starts its jitter at the first datagram's transit time: a DUT's client,
    whose clock counts from its boot, makes it read the clocks' difference (2e8 ms after 98
    datagrams here, decaying by 15/16 each): not a figure of the path (None), not a bench fault;
    a jitter beyond what iperf can print at all is still a malformed number."""
    line = "19700101000000,10.77.0.1,5001,10.77.0.2,49153,1,0.0-2.0,4950000,19800000,200123456.789,0,3386,0.000,0\n"
    r = summary_record(line)
    assert r.jitter_ms is None and r.total == 3386 and r.loss_pct == 0.0
    with pytest.raises(BenchError, match="jitter_ms"):
        summary_record(line.replace("200123456.789", "1e15"))
