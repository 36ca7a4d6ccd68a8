"""Where each lost datagram went: a UDP measurement's loss placed, hop by hop along its path, on
the PC's socket, the PC's interface, a shaper, the link, the DUT, the peer, or left unexplained,
each with the counter deltas it comes from (hil.wire.counters). A hop is charged at most what is
still unexplained, in path order from the sender to the receiver."""

from __future__ import annotations

from dataclasses import dataclass, field

from hil.wire.counters import Counters

BUCKETS = ("PC socket", "PC interface", "shaper", "link", "DUT", "peer", "unexplained")
# the DUT console's counters (hil-fw `stats`, lwIP's) that count a frame or datagram its stack
# dropped: each layer's `drop` (lwIP counts a memory or checksum error, or a pool that ran out, in
# `drop` too: those causes are shown, never charged again). They count both directions' traffic.
DUT_DROPS = ("link_drop", "ip_drop", "udp_drop")
DUT_CAUSES = ("_memerr", "_chkerr", "_err")


@dataclass
class Charge:
    bucket: str
    lost: int
    evidence: list[str] = field(default_factory=list)  # "pc_qdisc.drops +12"


@dataclass
class Ledger:
    lost: int
    charges: list[Charge]

    def count(self, bucket: str) -> int:
        return sum(c.lost for c in self.charges if c.bucket == bucket)

    def as_fields(self) -> dict[str, object]:
        return {"lost": self.lost, **{c.bucket: {"lost": c.lost, "from": c.evidence} for c in self.charges}}

    def text(self) -> str:
        if self.lost == 0 and not any(c.evidence for c in self.charges):
            return "no datagram lost; no counter on the path moved"
        lines = [f"{self.lost} datagrams lost, placed hop by hop (sender -> receiver):"]
        for c in self.charges:
            lines.append(f"  {c.bucket:13s} {c.lost:8d}  {'; '.join(c.evidence) or '-'}")
        return "\n".join(lines)

    def explanation(self) -> str | None:
        """What the DUT's own counters explain of the loss, for a failure message (None: nothing)."""
        dut = next((c for c in self.charges if c.bucket == "DUT" and c.lost), None)
        if dut is None:
            return None
        drops = "; ".join(e for e in dut.evidence if not e.startswith("why"))
        return f"the DUT's own drop counters explain {dut.lost} of the {self.lost} lost ({drops})"


def _get(d: Counters, hop: str, *keys: str) -> list[tuple[str, int]]:
    values = d.get(hop, {})
    return [(f"{hop}.{k}", values[k]) for k in keys if values.get(k, 0) > 0]


def _dut_drops(d: Counters) -> list[tuple[str, int]]:
    values = d.get("dut", {})
    return [(f"dut.{k}", values[k]) for k in DUT_DROPS if values.get(k, 0) > 0]


def dut_causes(d: Counters) -> list[str]:
    """The DUT's counters that say why it dropped (memory, checksum, pools), for the evidence only."""
    values = d.get("dut", {})
    layers = ("link_", "ip_", "udp_", "pool_")
    return [
        f"dut.{k} +{v}" for k, v in sorted(values.items()) if v > 0 and k.startswith(layers) and k.endswith(DUT_CAUSES)
    ]


def _socket(d: Counters, hop: str) -> list[tuple[str, int]]:
    """A receiving socket's drops: UdpInErrors counts each once (a full buffer is also counted in
    UdpRcvbufErrors, a bad checksum in UdpInCsumErrors: both shown in its name, never charged twice)."""
    k = d.get(hop, {})
    if k.get("UdpInErrors", 0) <= 0:
        return []
    parts = [f"{name} {k[name]}" for name in ("UdpRcvbufErrors", "UdpInCsumErrors") if k.get(name, 0) > 0]
    return [(f"{hop}.UdpInErrors" + (f" ({', '.join(parts)})" if parts else ""), k["UdpInErrors"])]


def _send_buffer(d: Counters, kernel: str, qdisc: str) -> list[tuple[str, int]]:
    """A sender's own drops: UdpSndbufErrors less what its shaper dropped (a datagram the qdisc
    drops is also counted there: it is the shaper's)."""
    sndbuf = d.get(kernel, {}).get("UdpSndbufErrors", 0) - d.get(f"{qdisc}_qdisc", {}).get("drops", 0)
    return [(f"{kernel}.UdpSndbufErrors beyond the shaper's drops", sndbuf)] if sndbuf > 0 else []


def _shaper(d: Counters, hop: str) -> list[tuple[str, int]]:
    q = d.get(f"{hop}_qdisc", {})
    return [(f"{hop}_qdisc.drops", q["drops"])] if q.get("drops", 0) > 0 else []


def path_counters(d: Counters, direction: str, in_path: bool) -> list[tuple[str, list[tuple[str, int]]]]:
    """The counters of each bucket along the direction's path (dut_rx: PC -> far end; dut_tx: far end -> PC)."""
    rx_faults = ("rx_dropped", "rx_errors", "rx_missed_errors", "rx_over_errors")
    tx_faults = ("tx_dropped", "tx_errors")
    if not in_path:
        # the virtual link: veth-pc <-> veth-dut -- br0 (the injected loss: nftables) -- tap0 <-> DUT
        if direction == "dut_rx":
            return [
                ("shaper", _shaper(d, "pc")),
                ("PC socket", _send_buffer(d, "pc_kernel", "pc")),
                ("PC interface", _get(d, "pc", *tx_faults)),
                ("link", _get(d, "dut_side", *rx_faults) + _get(d, "link_loss", "dropped")),
                ("DUT", _get(d, "dut_tap", *tx_faults) + _dut_drops(d)),
            ]
        return [
            ("DUT", _dut_drops(d) + _get(d, "dut_tap", "rx_dropped", "rx_errors")),
            ("link", _get(d, "link_loss", "dropped")),
            ("shaper", _shaper(d, "dut_side")),
            ("link", _get(d, "dut_side", *tx_faults)),
            ("PC interface", _get(d, "pc", *rx_faults)),
            ("PC socket", _socket(d, "pc_kernel")),
        ]
    if direction == "dut_rx":  # downlink: PC -> DUT -> peer
        return [
            ("shaper", _shaper(d, "pc")),
            ("PC socket", _send_buffer(d, "pc_kernel", "pc")),
            ("PC interface", _get(d, "pc", *tx_faults)),
            ("link", _get(d, "port_pc", *rx_faults)),
            ("DUT", _get(d, "dut_tap_pc", *tx_faults) + _dut_drops(d) + _get(d, "port_peer", *tx_faults)),
            ("shaper", _shaper(d, "port_peer")),
            ("peer", _get(d, "peer", *rx_faults) + _socket(d, "peer_kernel")),
        ]
    return [  # uplink: peer -> DUT -> PC
        ("shaper", _shaper(d, "peer")),
        ("peer", _send_buffer(d, "peer_kernel", "peer") + _get(d, "peer", *tx_faults)),
        ("link", _get(d, "port_peer", *rx_faults)),
        ("DUT", _get(d, "dut_tap_peer", *tx_faults) + _dut_drops(d) + _get(d, "port_pc", *tx_faults)),
        ("shaper", _shaper(d, "port_pc")),
        ("PC interface", _get(d, "pc", *rx_faults)),
        ("PC socket", _socket(d, "pc_kernel")),
    ]


def loss_ledger(lost: int, deltas: Counters, direction: str, in_path: bool) -> Ledger:
    """The `lost` datagrams of one direction placed on the hops whose counters moved."""
    remaining = max(lost, 0)
    charges: dict[str, Charge] = {b: Charge(b, 0) for b in BUCKETS}
    for bucket, counters in path_counters(deltas, direction, in_path):
        for name, value in counters:
            charged = min(value, remaining)
            remaining -= charged
            charges[bucket].lost += charged
            charges[bucket].evidence.append(f"{name} +{value}" + (f" (charged {charged})" if charged != value else ""))
    charges["unexplained"].lost = remaining
    if causes := dut_causes(deltas):
        charges["DUT"].evidence.append(f"why (not charged again): {', '.join(causes)}")
    return Ledger(max(lost, 0), [charges[b] for b in BUCKETS])
