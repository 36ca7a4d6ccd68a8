"""Where each lost datagram went: a UDP measurement's loss placed, hop by hop along its path, on
the PC's socket, the PC's interface, a shaper, the link, the DUT, the peer, or left unexplained,
each with the counter deltas it comes from (hil.wire.counters). A hop is charged at most what is
still unexplained, in path order from the sender to the receiver."""

from __future__ import annotations

from dataclasses import dataclass, field

from hil.wire.counters import Counters

BUCKETS = ("PC socket", "PC interface", "shaper", "link", "DUT", "peer", "unexplained")
# the DUT console's counters (hil-fw `stats`) that count a datagram the DUT's stack dropped: its
# link, IP and UDP layers' drops, memory and checksum errors, and a pool that ran out
DUT_DROP_LAYERS = ("link_", "ip_", "udp_")
DUT_DROP_SUFFIXES = ("_drop", "_memerr", "_chkerr")


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
        lines = [f"{self.lost} datagrams lost, placed hop by hop (sender -> receiver):"]
        for c in self.charges:
            lines.append(f"  {c.bucket:13s} {c.lost:8d}  {'; '.join(c.evidence) or '-'}")
        return "\n".join(lines)

    def explanation(self) -> str | None:
        """What the DUT's own counters explain of the loss, for a failure message (None: nothing)."""
        dut = next((c for c in self.charges if c.bucket == "DUT" and c.lost), None)
        if dut is None:
            return None
        return f"the DUT's own counters explain {dut.lost} of the {self.lost} lost ({'; '.join(dut.evidence)})"


def _get(d: Counters, hop: str, *keys: str) -> list[tuple[str, int]]:
    values = d.get(hop, {})
    return [(f"{hop}.{k}", values[k]) for k in keys if values.get(k, 0) > 0]


def _dut_drops(d: Counters) -> list[tuple[str, int]]:
    values = d.get("dut", {})
    return [
        (f"dut.{k}", v)
        for k, v in sorted(values.items())
        if v > 0
        and (
            (k.startswith(DUT_DROP_LAYERS) and k.endswith(DUT_DROP_SUFFIXES))
            or (k.startswith("pool_") and k.endswith("_err"))
        )
    ]


def _shaper(d: Counters, hop: str) -> list[tuple[str, int]]:
    q = d.get(f"{hop}_qdisc", {})
    return [(f"{hop}_qdisc.drops", q["drops"])] if q.get("drops", 0) > 0 else []


def path_counters(d: Counters, direction: str, in_path: bool) -> list[tuple[str, list[tuple[str, int]]]]:
    """The counters of each bucket along the direction's path (dut_rx: PC -> far end; dut_tx: far end -> PC)."""
    rx_faults = ("rx_dropped", "rx_errors", "rx_missed_errors", "rx_over_errors")
    tx_faults = ("tx_dropped", "tx_errors")
    socket = ("UdpRcvbufErrors", "UdpInErrors")
    if not in_path:
        if direction == "dut_rx":
            return [
                ("PC socket", _get(d, "pc_kernel", "UdpSndbufErrors")),
                ("shaper", _shaper(d, "pc")),
                ("PC interface", _get(d, "pc", *tx_faults)),
                ("link", _get(d, "link_loss", "dropped") + _get(d, "dut_side", *rx_faults)),
                ("DUT", _get(d, "dut_tap", *tx_faults) + _dut_drops(d)),
            ]
        return [
            ("DUT", _dut_drops(d) + _get(d, "dut_tap", "rx_dropped", "rx_errors")),
            ("shaper", _shaper(d, "dut_side")),
            ("link", _get(d, "link_loss", "dropped") + _get(d, "dut_side", *tx_faults)),
            ("PC interface", _get(d, "pc", *rx_faults)),
            ("PC socket", _get(d, "pc_kernel", *socket)),
        ]
    if direction == "dut_rx":  # downlink: PC -> DUT -> peer
        return [
            ("PC socket", _get(d, "pc_kernel", "UdpSndbufErrors")),
            ("shaper", _shaper(d, "pc")),
            ("PC interface", _get(d, "pc", *tx_faults)),
            ("link", _get(d, "port_pc", *rx_faults)),
            ("DUT", _get(d, "dut_tap_pc", *tx_faults) + _dut_drops(d) + _get(d, "port_peer", *tx_faults)),
            ("shaper", _shaper(d, "port_peer")),
            ("peer", _get(d, "peer", *rx_faults) + _get(d, "peer_kernel", *socket)),
        ]
    return [  # uplink: peer -> DUT -> PC
        ("peer", _get(d, "peer_kernel", "UdpSndbufErrors") + _get(d, "peer", *tx_faults)),
        ("shaper", _shaper(d, "peer")),
        ("link", _get(d, "port_peer", *rx_faults)),
        ("DUT", _get(d, "dut_tap_peer", *tx_faults) + _dut_drops(d) + _get(d, "port_pc", *tx_faults)),
        ("shaper", _shaper(d, "port_pc")),
        ("PC interface", _get(d, "pc", *rx_faults)),
        ("PC socket", _get(d, "pc_kernel", *socket)),
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
    return Ledger(max(lost, 0), [charges[b] for b in BUCKETS])
