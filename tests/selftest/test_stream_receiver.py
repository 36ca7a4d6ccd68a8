"""The PC's stream peer counts what it receives by the firmware's rules (firmware/tests/
test_stream_wire.c, test_fw_edges.c): every packet once, duplicates and stale packets apart,
every lossy burst however many, and received + lost = every packet of the bursts it closed."""

from __future__ import annotations

import random

import pytest

from hil.traffic.stream_peer import RX_WINDOW, Stream, StreamRx

pytestmark = pytest.mark.selftest

SPEC = Stream(id=7, size=100, burst=5, period_ms=100, threshold_ms=50, gap_us=100)


def _rx(packets: list[tuple[int, int]]) -> StreamRx:
    """A receiver fed (burst, index) in the order given, on time, then closed."""
    rx = StreamRx(SPEC)
    for burst, index in packets:
        rx.account(burst, index, burst * SPEC.burst + index, burst * 0.1)
    rx.close()
    return rx


def test_losses_beyond_any_cap_are_all_counted() -> None:
    # bursts 0 and 21 whole, the twenty between each one packet short
    packets = [(b, i) for b in range(22) for i in range(SPEC.burst) if b in (0, 21) or i != 2]
    rx = _rx(packets)
    assert rx.received == len(packets)
    assert sum(rx.losses.values()) == 20 and len(rx.losses) == 20


def test_duplicates_are_counted_apart_and_do_not_hide_loss() -> None:
    # burst 1 misses two packets; two others arrive three times each
    packets = [(0, i) for i in range(5)] + [(1, 0), (1, 0), (1, 0), (1, 1), (1, 1), (1, 1), (1, 2)]
    packets += [(2, i) for i in range(5)]
    rx = _rx(packets)
    assert (rx.received, rx.duplicates, rx.losses) == (13, 4, {1: 2})


def test_reordered_packets_are_received_not_lost() -> None:
    packets = (
        [(0, i) for i in range(5)] + [(1, 0), (1, 2), (1, 1), (1, 4), (2, 0), (1, 3)] + [(2, i) for i in (1, 2, 3, 4)]
    )
    rx = _rx(packets)
    assert rx.received == 15 and rx.losses == {} and rx.outoforder == 2


def test_a_packet_of_a_closed_burst_is_stale_not_received() -> None:
    packets = [(0, i) for i in range(4)] + [(b, i) for b in range(1, RX_WINDOW + 1) for i in range(5)] + [(0, 4)]
    rx = _rx(packets)
    assert rx.losses == {0: 1} and rx.stale == 1 and rx.received == 4 + 5 * RX_WINDOW


def test_an_index_outside_the_burst_is_invalid() -> None:
    rx = _rx([(0, 0), (0, 99)])
    assert rx.invalid == 1 and rx.received == 1


def test_every_packet_is_counted_exactly_once_in_any_order() -> None:
    gen = random.Random(27)
    for _ in range(200):
        bursts = gen.randint(1, 12)
        sent = [(b, i) for b in range(bursts) for i in range(SPEC.burst)]
        arrived = [p for p in sent if gen.random() > 0.2]
        arrived += gen.sample(arrived, k=min(len(arrived), gen.randint(0, 5)))  # duplicates
        # reorder within a few packets only (a late straggler beyond the window is stale)
        for k in range(len(arrived) - 1):
            if gen.random() < 0.2:
                arrived[k], arrived[k + 1] = arrived[k + 1], arrived[k]
        rx = _rx(arrived)
        if not arrived:
            assert rx.received == 0 and rx.losses == {}
            continue
        last = max(b for b, _ in arrived)
        # each packet of every closed burst is either received once or lost once
        assert rx.received + sum(rx.losses.values()) == (last + 1) * SPEC.burst, (arrived, rx)
        assert rx.received <= len(set(arrived)) and rx.received + rx.duplicates + rx.stale == len(arrived)
