"""The host DUT against the real iperf 2.1.x on the PC side, both roles, TCP and UDP.

Each case runs on the shaped 100 Mbit/s virtual link and checks that the DUT's and the PC's
numbers agree within 2 %.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from hil.console.protocol import FinalLine
from hil.tools.iperf2 import Iperf2ClientArgs, Iperf2Record, Iperf2Server, run_client
from tests.support.host_dut import RunningHostDut

pytestmark = pytest.mark.virtual_bench

DURATION_S = 3
UDP_RATE = "50m"  # decimal: 50,000,000 bit/s
AGREEMENT = 0.02


def agree(a: float, b: float) -> bool:
    return abs(a - b) <= AGREEMENT * max(a, b)


def dut_server_result(dut: RunningHostDut, udp: bool) -> FinalLine:
    reply = dut.console.wait_final("iperf", timeout_s=DURATION_S + 10)
    assert reply.final is not None and reply.final.ok, reply.output
    assert reply.final.fields["role"] == "server" and reply.final.fields["proto"] == ("udp" if udp else "tcp")
    return reply.final


@pytest.fixture
def dut(start_host_dut) -> RunningHostDut:
    return start_host_dut("default")


@pytest.mark.parametrize("udp", [False, True], ids=["tcp", "udp"])
def test_pc_client_to_dut_server(dut: RunningHostDut, udp: bool) -> None:
    topo = dut.topology
    dut.console.send("iperf -s -u" if udp else "iperf -s")
    dut.console.wait_text(r"iperf: (TCP|UDP) server listening", timeout_s=5)
    args = Iperf2ClientArgs(
        host=topo.config.dut_ip, udp=udp, duration_s=DURATION_S, bandwidth=UDP_RATE if udp else None
    )
    pc = run_client(topo.exec_prefix(topo.pc_ns), args, timeout_s=DURATION_S + 20).record
    result = dut_server_result(dut, udp)
    dut_mbps = result.get_float("mbps")
    print(f"PC client {pc.mbps:.3f} Mbit/s, DUT server {dut_mbps:.3f} Mbit/s")
    assert result.fields["status"] == "ok"
    assert agree(pc.mbps, dut_mbps), f"PC {pc.mbps:.3f} vs DUT {dut_mbps:.3f} Mbit/s differ by more than 2 %"
    if udp:
        assert result.get_int("datagrams") > 0
        assert result.get_float("loss_pct") < 1.0, "50 Mbit/s on a 100 Mbit/s link should not lose datagrams"


@pytest.mark.parametrize("udp", [False, True], ids=["tcp", "udp"])
def test_dut_client_to_pc_server(dut: RunningHostDut, udp: bool, tmp_path: Path) -> None:
    topo = dut.topology
    with Iperf2Server(topo.exec_prefix(topo.pc_ns), udp=udp, port=5001, log_path=tmp_path / "iperf-server.csv") as srv:
        cmd = f"iperf -c {topo.config.pc_ip} -t {DURATION_S}" + (f" -u -b {UDP_RATE}" if udp else "")
        reply = dut.console.command(cmd, timeout_s=DURATION_S + 15)
        pc: Iperf2Record = srv.wait_record(timeout_s=5)
    assert reply.final is not None and reply.final.ok, reply.output
    result = reply.final
    assert result.fields["status"] == "ok", reply.output
    dut_mbps = result.get_float("mbps")
    print(f"DUT client {dut_mbps:.3f} Mbit/s, PC server {pc.mbps:.3f} Mbit/s")
    assert agree(pc.mbps, dut_mbps), f"PC {pc.mbps:.3f} vs DUT {dut_mbps:.3f} Mbit/s differ by more than 2 %"
    if udp:
        # the DUT client reports what the PC's server measured, from the server's report datagram
        assert result.fields["server_report"] == "1", reply.output
        assert agree(result.get_float("server_mbps"), pc.mbps)
        assert result.get_int("server_lost") == pc.lost
        assert result.get_int("server_bytes") == pc.bytes


def test_console_ping_summary_matches_its_replies(dut: RunningHostDut) -> None:
    """The firmware's ping summary (avg, mdev) is what its own reply lines give, and with -q a
    flood prints nothing but the summary (so a slow console cannot pace it or lose its result)."""
    pc_ip = dut.topology.config.pc_ip
    reply = dut.console.command(f"ping {pc_ip} -c 300 -i 0 -s 1440 -W 1", timeout_s=30)
    assert reply.final is not None and reply.final.ok, reply.output[-3:]
    rtts = [float(m) for line in reply.output for m in re.findall(r"time=([0-9.]+) ms", line)]
    f = reply.final
    assert len(rtts) == f.get_int("received") == 300
    assert f.get_float("avg_ms") == pytest.approx(statistics.fmean(rtts), abs=0.002)
    assert f.get_float("mdev_ms") == pytest.approx(statistics.pstdev(rtts), abs=0.002)
    quiet = dut.console.command(f"ping {pc_ip} -c 2000 -i 0 -s 1440 -W 1 -q", timeout_s=60)
    assert quiet.final is not None and quiet.final.ok and quiet.final.get_int("received") == 2000
    assert [line for line in quiet.output if "bytes from" in line or "timeout" in line] == []
    q = quiet.final
    assert 0 <= q.get_float("mdev_ms") <= q.get_float("max_ms") - q.get_float("min_ms")
    print(
        f"300 replies: avg {f.fields['avg_ms']} mdev {f.fields['mdev_ms']} ms; quiet flood of 2000: "
        f"min/avg/max/mdev {q.fields['min_ms']}/{q.fields['avg_ms']}/{q.fields['max_ms']}/{q.fields['mdev_ms']} ms"
    )


def test_tcp_server_binds_again_while_the_last_connection_closes(dut: RunningHostDut) -> None:
    """Back-to-back repetitions: the DUT reports a TCP test when the client's FIN arrives, and its
    own FIN then waits for the client's final ACK (LAST_ACK) on port 5001. Behind a 50 ms delay
    line that ACK is still on its way when the next `iperf -s` binds the port: the server must
    take it (SO_REUSEADDR), not answer "cannot bind"."""
    topo = dut.topology
    dut.console.run_ok("linkdelay 50", 5)
    try:
        for i in range(3):
            dut.console.send("iperf -s")
            dut.console.wait_text(r"iperf: TCP server listening", timeout_s=5)
            args = Iperf2ClientArgs(host=topo.config.dut_ip, udp=False, duration_s=1, amount="200K")
            run_client(topo.exec_prefix(topo.pc_ns), args, timeout_s=20)
            assert dut_server_result(dut, udp=False).fields["status"] == "ok", f"repetition {i + 1}"
    finally:
        dut.console.run_ok("linkdelay 0", 5)
