"""The loss ledger places each lost datagram on the hop whose counter moved, in path order, never
more than was lost, and says what the DUT's own counters explain; counter deltas survive a reset."""

from __future__ import annotations

import pytest

from hil.wire.counters import delta
from hil.wire.ledger import BUCKETS, loss_ledger

pytestmark = pytest.mark.selftest


def test_each_hop_is_charged_what_its_counter_says_in_path_order() -> None:
    deltas = {
        "pc_qdisc": {"drops": 5, "packets": 1000, "shaper": 0},
        "link_loss": {"dropped": 20},
        "dut": {"udp_drop": 3, "etharp_drop": 7, "udp_recv": 970, "pool_PBUF_POOL_err": 1},
    }
    ledger = loss_ledger(30, deltas, "dut_rx", in_path=False)
    assert [c.bucket for c in ledger.charges] == list(BUCKETS)
    # lwIP counts a pool that ran out in `drop` too: shown as the why, never charged twice
    counts = {b: ledger.count(b) for b in BUCKETS if ledger.count(b)}
    assert counts == {"shaper": 5, "link": 20, "DUT": 3, "unexplained": 2}
    assert "link_loss.dropped +20" in ledger.text() and "etharp" not in ledger.text()  # ARP is not a datagram
    assert "why (not charged again): dut.pool_PBUF_POOL_err +1" in ledger.text()
    why = ledger.explanation()
    assert why is not None and "explain 3 of the 30 lost (dut.udp_drop +3)" in why


def test_a_hop_is_never_charged_more_than_is_left() -> None:
    # a full socket buffer counts in UdpInErrors and UdpRcvbufErrors alike: charged once
    deltas = {"pc_kernel": {"UdpInErrors": 10, "UdpRcvbufErrors": 10}, "link_loss": {"dropped": 4}}
    ledger = loss_ledger(8, deltas, "dut_tx", in_path=False)  # the link comes before the PC's socket
    assert (ledger.count("link"), ledger.count("PC socket"), ledger.count("unexplained")) == (4, 4, 0)
    assert "pc_kernel.UdpInErrors (UdpRcvbufErrors 10) +10 (charged 4)" in ledger.text()
    assert ledger.explanation() is None  # the DUT's counters explain nothing here
    assert loss_ledger(0, deltas, "dut_tx", in_path=False).count("unexplained") == 0


def test_in_the_path_the_peer_and_both_shapers_have_their_place() -> None:
    deltas = {"port_peer_qdisc": {"drops": 2}, "peer_kernel": {"UdpInErrors": 3}, "dut_tap_pc": {"tx_dropped": 1}}
    down = loss_ledger(10, deltas, "dut_rx", in_path=True)
    assert (down.count("DUT"), down.count("shaper"), down.count("peer"), down.count("unexplained")) == (1, 2, 3, 4)
    up = loss_ledger(10, {"peer_qdisc": {"drops": 6}, "port_pc_qdisc": {"drops": 1}}, "dut_tx", in_path=True)
    assert (up.count("shaper"), up.count("unexplained")) == (7, 3)


def test_a_datagram_the_shaper_dropped_is_not_the_senders_socket_too() -> None:
    # the kernel counts a datagram its qdisc dropped in UdpSndbufErrors as well
    deltas = {"pc_qdisc": {"drops": 6}, "pc_kernel": {"UdpSndbufErrors": 9}}
    ledger = loss_ledger(10, deltas, "dut_rx", in_path=False)
    assert (ledger.count("shaper"), ledger.count("PC socket"), ledger.count("unexplained")) == (6, 3, 1)


def test_a_counter_that_went_down_was_reset() -> None:
    before = {"dut": {"udp_drop": 50, "ip_recv": 10}, "pc": {"rx_packets": 5}}
    after = {"dut": {"udp_drop": 2, "ip_recv": 10}, "pc": {"rx_packets": 9}, "new": {"x": 1}}
    assert delta(before, after) == {"dut": {"udp_drop": 2}, "pc": {"rx_packets": 4}}
