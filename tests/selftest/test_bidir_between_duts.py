"""Both directions at once between two DUTs (hil.traffic.roles.run_bidir_duts), on two stand-in
consoles that answer as the project's firmware does: both servers listen before either client
starts, each client sends to the other DUT, and each direction's numbers are its receiving DUT's
(dut_tx: the partner's server; dut_rx: the DUT's own)."""

from __future__ import annotations

import pytest

from hil.console.driver import CommandReply
from hil.console.protocol import parse_final_line
from hil.errors import DutError
from hil.traffic.roles import DutSide, run_bidir_duts

pytestmark = pytest.mark.selftest


class StandInConsole:
    """Records what is sent; `wait_finals` answers with the server's and the client's final lines."""

    def __init__(self, server_mbps: float, client_mbps: float, lost: int = 0, status: str = "ok") -> None:
        self.sent: list[str] = []
        self.server, self.client, self.lost, self.status = server_mbps, client_mbps, lost, status

    def send(self, line: str) -> None:
        self.sent.append(line)

    def wait_text(self, pattern: str, timeout_s: float) -> None:
        assert self.sent and self.sent[-1].startswith("iperf -s"), "waited for a server that was not started"

    def wait_finals(self, command: str, count: int, timeout_s: float) -> list[CommandReply]:
        udp = " -u" in self.sent[0]
        extra = f" datagrams=1000 lost={self.lost} loss_pct=0 outoforder=0 jitter_ms=0.01" if udp else ""
        lines = [f"RESULT iperf role=server proto=x status={self.status} mbps={self.server}{extra}",
                 f"RESULT iperf role=client proto=x status=ok mbps={self.client}"]  # fmt: skip
        return [CommandReply("iperf", parse_final_line(line), [line]) for line in lines]  # type: ignore[arg-type]


def test_both_servers_listen_first_and_each_direction_is_its_receivers() -> None:
    dut, near = StandInConsole(server_mbps=17.1, client_mbps=17.5), StandInConsole(server_mbps=18.2, client_mbps=18.4)
    r = run_bidir_duts("tcp", 2.0, None, DutSide(dut, "10.77.0.2"), DutSide(near, "10.77.0.3"))  # type: ignore[arg-type]
    assert near.sent[0].startswith("iperf -s -p 5001") and dut.sent[0].startswith("iperf -s -p 5002")
    assert dut.sent[1].startswith("iperf -c 10.77.0.3 -p 5001") and near.sent[1].startswith(
        "iperf -c 10.77.0.2 -p 5002"
    )
    assert (r.dut_tx.receiver_mbps, r.dut_tx.sender_mbps) == (18.2, 17.5)  # the partner received what the DUT sent
    assert (r.dut_rx.receiver_mbps, r.dut_rx.sender_mbps) == (17.1, 18.4)


def test_udp_loss_is_the_receiving_duts_and_a_failed_test_names_its_side() -> None:
    dut, near = StandInConsole(9.0, 9.0, lost=0), StandInConsole(9.0, 9.0, lost=10)
    r = run_bidir_duts("udp", 2.0, 9.0, DutSide(dut, "10.77.0.2"), DutSide(near, "10.77.0.3"))  # type: ignore[arg-type]
    assert r.dut_tx.loss_pct == pytest.approx(1.0) and r.dut_rx.loss_pct == 0.0
    broken = StandInConsole(9.0, 9.0, status="timeout")
    with pytest.raises(DutError, match="ended on its partner"):
        run_bidir_duts("tcp", 2.0, None, DutSide(dut, "10.77.0.2"), DutSide(broken, "10.77.0.3"))  # type: ignore[arg-type]
