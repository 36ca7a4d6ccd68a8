"""Frames the bench PC delivered out of order to a DUT that runs on it: a bench fault, not the DUT's.

A cable does not reorder frames. The virtual bench's links are veth pairs and a tap whose receive
side runs on whichever of the host's CPUs sent the frame, so under load the host can hand the DUT
a TCP stream out of order: the DUT's stack queues the early segments (lwIP's `tcp_ooseq`), answers
with duplicate ACKs, and the PC retransmits segments the DUT already has (`tcp_rx_dup`), halving
its congestion window each time. A clean-clone run measured PC->DUT TCP at 60-68 % of the link
that way, confirmed by a second trial, while every hop delivered every frame and each of the
PC's 166 retransmissions arrived at the DUT as a duplicate (640 segments out of sequence).

The case's wire evidence (hil.wire.counters, hil.wire.pcap_summary) says when that happened: the
PC retransmitted, every frame it sent reached the DUT's link (nothing lost on the way), the DUT
received every retransmission as a duplicate of a segment it already held, and some segments out
of sequence. Only for a DUT that runs on the bench PC: on a real board's cable the same figures
would be the board's own driver reordering frames, and stay its failure."""

from __future__ import annotations

from collections.abc import Mapping


def _int(d: object, key: str) -> int | None:
    if not isinstance(d, Mapping):
        return None
    v = d.get(key)
    return int(v) if isinstance(v, int | float) else None


def reordered_by_the_bench(extra: Mapping[str, object]) -> str | None:
    """Why the record's TCP transfer from the PC to the DUT was reordered on the bench and lost
    nothing, from its wire evidence (`extra["wire"]`), or None when it was not (or the evidence
    does not say: no capture, no DUT counters)."""
    wire = extra.get("wire")
    if not isinstance(wire, Mapping):
        return None
    capture, counters = wire.get("capture_pc"), wire.get("counters")
    if not isinstance(capture, Mapping) or not isinstance(counters, Mapping):
        return None
    retransmitted = _int(capture.get("near->far"), "retransmissions")
    sent = _int(counters.get("pc"), "tx_packets")
    dut = counters.get("dut")
    received, ooseq, dups = _int(dut, "link_recv"), _int(dut, "tcp_ooseq"), _int(dut, "tcp_rx_dup")
    if None in (retransmitted, sent, received, ooseq, dups):
        return None
    assert retransmitted is not None and sent is not None and received is not None
    assert ooseq is not None and dups is not None
    if not (retransmitted > 0 and ooseq > 0 and received >= sent and dups >= retransmitted):
        return None
    return (
        f"the bench delivered the PC's segments out of order: the DUT received {ooseq} out of sequence and "
        f"all {retransmitted} of the PC's retransmissions as duplicates of segments it held, every one of the "
        f"{sent} frames the PC sent reached it ({received} received)"
    )
