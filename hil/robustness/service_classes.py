"""The robustness classes that aim at the DUT's services while they run (hil.robustness.states):
what a handful of spoofed or idle peers can hold (`exhaust`), replies and reports a service must
not believe (`forged`), and a bridge's address table (`fdb`).

They are frames like the other classes (built here, written to a PCAP, sent as they are,
replayable); where a state has a live connection (hil.robustness.live) its ports and sequence
numbers are in `Ends.live`, and the frames aim inside and outside its window. What needs a real
TCP stack on the PC's side (connections that are opened and then held silent, a receiver that never
reads) is done by the state with hil.robustness.actors while the frames go out.

Addresses "nobody answers": host addresses of the DUT's subnet that no station of the bench holds
(the top of the subnet, below the broadcast address): a half-open connection from one of them can
never complete, its SYN-ACK waits for an ARP reply that never comes.
"""

from __future__ import annotations

import ipaddress
import random
import struct
from typing import Any

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw

from hil.robustness.classes import IPERF_PORT, Ends, TrafficClass, Variant

PING_ID = 0xAFAF  # the project firmware's ping identifier (fw_config.h FW_PING_ID)
PING_PAYLOAD = 56  # its default ICMP payload (FW_PING_DEFAULT_SIZE)
UNANSWERED = 32  # how many of the subnet's top addresses serve as sources nobody answers
LOCAL_EXPERIMENTAL = 0x88B5  # IEEE 802 local experimental EtherType: frames no station consumes
DUT_UDP_PORTS = range(49152, 49168)  # lwIP's first ephemeral ports: a UDP client's, when no live flow says


def unanswered(e: Ends, rng: random.Random) -> str:
    """A host address of the target's subnet that no station of the bench holds (its top)."""
    net = ipaddress.IPv4Network(f"{e.dst_ip}/{e.prefix_len}", strict=False)
    top = int(net.broadcast_address) - 1
    taken = {int(ipaddress.IPv4Address(a)) for a in (e.dst_ip, e.src_ip, e.dut_ip or e.dst_ip)}
    for _ in range(64):
        cand = top - rng.randrange(0, min(UNANSWERED, max(1, net.num_addresses - 3)))
        if cand not in taken and cand > int(net.network_address):
            return str(ipaddress.IPv4Address(cand))
    return str(ipaddress.IPv4Address(top))


def _eth(e: Ends, src: str | None = None, dst: str | None = None) -> Ether:
    return Ether(src=src or e.src_mac, dst=dst or e.dst_mac)


def _syn(e: Ends, r: random.Random, src_ip: str, sport: int | None = None, **fields: Any) -> Packet:
    return _eth(e) / IP(src=src_ip, dst=e.dst_ip) / TCP(
        sport=sport or r.randrange(1024, 65536), dport=e.service_port, flags="S", seq=r.getrandbits(32),
        options=[("MSS", 1460)], **fields)  # fmt: skip


def iperf_udp_header(seq: int, sec: int = 0, usec: int = 0) -> bytes:
    """iperf 2's 16-byte datagram header: id, tv_sec, tv_usec, id2 (a negative id: the FIN)."""
    return struct.pack("!iIII", seq, sec, usec, 0)


def iperf_server_report(seq: int, total: int, datagrams: int, lost: int) -> bytes:
    """A UDP server's answer to a FIN: the FIN's header, then the v1 report (flags, total bytes in
    two words, stop time, lost, out of order, datagrams, jitter)."""
    head = iperf_udp_header(seq)
    report = struct.pack("!IiIiiiiiii", 0x80000000, total >> 32, total & 0xFFFFFFFF, 1, 0, lost, 0, datagrams, 0, 0)
    return head + report


# --- exhaust: what spoofed or idle peers can hold ---------------------------------------------


def _syn_unanswered(e: Ends, r: random.Random) -> list[Packet]:
    return [_syn(e, r, unanswered(e, r)) for _ in range(64)]


def _syn_from_pc(e: Ends, r: random.Random) -> list[Packet]:
    return [_syn(e, r, e.src_ip, sport=40000 + i) for i in range(64)]


def _syn_from_target(e: Ends, r: random.Random) -> Packet:
    return _syn(e, r, e.dst_ip)


def _syn_from_dut(e: Ends, r: random.Random) -> Packet:
    return _syn(e, r, e.dut_ip or e.dst_ip)


def _syn_with_data(e: Ends, r: random.Random) -> list[Packet]:
    return [_syn(e, r, unanswered(e, r)) / Raw(r.randbytes(512)) for _ in range(8)]


def _ack_unanswered(e: Ends, r: random.Random) -> list[Packet]:
    return [_eth(e) / IP(src=unanswered(e, r), dst=e.dst_ip)
            / TCP(sport=r.randrange(1024, 65536), dport=e.service_port, flags="A", seq=r.getrandbits(32),
                  ack=r.getrandbits(32)) for _ in range(16)]  # fmt: skip


def _udp_claims(e: Ends, r: random.Random) -> list[Packet]:
    """iperf 2 datagrams to the UDP server's port from addresses nobody answers: each would claim a
    server that takes the first sender as its test's client."""
    return [_eth(e) / IP(src=unanswered(e, r), dst=e.dst_ip) / UDP(sport=r.randrange(1024, 65536), dport=e.service_port)
            / Raw(iperf_udp_header(i) + r.randbytes(100)) for i in range(8)]  # fmt: skip


def _exhaust() -> TrafficClass:
    systematic: tuple[tuple[str, Variant], ...] = (
        ("SYN flood to the service port from 64 addresses nobody answers ARP for", _syn_unanswered),
        ("SYN flood from the PC's address, 64 source ports", _syn_from_pc),
        ("SYN to the service port from the target's own address", _syn_from_target),
        ("SYN to the service port from the DUT's own address", _syn_from_dut),
        ("SYN with 512 bytes of data from addresses nobody answers", _syn_with_data),
        ("ACKs to the service port with no connection, from addresses nobody answers", _ack_unanswered),
        ("iperf 2 UDP datagrams to the service port from addresses nobody answers (claims a UDP server)",
         _udp_claims),
    )  # fmt: skip
    fill: tuple[tuple[str, Variant], ...] = (
        ("SYN flood to the service port from addresses nobody answers", lambda e, r: _syn(e, r, unanswered(e, r))),
    )
    return TrafficClass("exhaust", "connection and state exhaustion at the DUT's services", systematic, fill,
                        {"quick": 4000, "full": 20000})  # fmt: skip


# --- forged: replies and reports a service must not believe -----------------------------------


def _echo_reply(e: Ends, seq: int, payload: bytes, chksum: int | None = None) -> Packet:
    icmp = ICMP(type=0, id=PING_ID, seq=seq) if chksum is None else ICMP(type=0, id=PING_ID, seq=seq, chksum=chksum)
    return _eth(e) / IP(src=e.src_ip, dst=e.dst_ip) / icmp / Raw(payload)


def _reply_bad_checksum(e: Ends, r: random.Random) -> list[Packet]:
    out = []
    for seq in range(1, 65):
        good = bytes(ICMP(type=0, id=PING_ID, seq=seq) / Raw(bytes(PING_PAYLOAD)))
        right = int.from_bytes(good[2:4], "big")
        out.append(_echo_reply(e, seq, bytes(PING_PAYLOAD), chksum=right ^ 0x5A5A))
    return out


def _reply_other_payload(e: Ends, r: random.Random) -> list[Packet]:
    return [_echo_reply(e, seq, r.randbytes(PING_PAYLOAD)) for seq in range(1, 65)]


def _reply_short_payload(e: Ends, r: random.Random) -> list[Packet]:
    return [_echo_reply(e, seq, r.randbytes(8)) for seq in range(1, 33)]


def _udp_client_ports(e: Ends) -> list[int]:
    return [e.live.dut_port] if e.live is not None and e.live.proto == "udp" else list(DUT_UDP_PORTS)


def _report_wrong_port(e: Ends, r: random.Random) -> list[Packet]:
    """Server reports to the DUT's UDP client from the PC's address but not the server's port,
    claiming a perfect test."""
    return [_eth(e) / IP(src=e.src_ip, dst=e.dst_ip) / UDP(sport=IPERF_PORT + 1, dport=port)
            / Raw(iperf_server_report(-(i + 2), 10_000_000, 8000 + i, 0))
            for port in _udp_client_ports(e) for i in range(2)]  # fmt: skip


def _report_wrong_address(e: Ends, r: random.Random) -> list[Packet]:
    return [_eth(e) / IP(src=unanswered(e, r), dst=e.dst_ip) / UDP(sport=e.service_port, dport=port)
            / Raw(iperf_server_report(-(i + 2), 1, 1, 1_000_000))
            for port in _udp_client_ports(e) for i in range(2)]  # fmt: skip


def _fin_from_stranger(e: Ends, r: random.Random) -> list[Packet]:
    """FINs to the UDP server's port from ports of the PC that ran no test: a server that answers
    them sends its last test's report to whoever asks (and toward a spoofed victim)."""
    return [_eth(e) / IP(src=e.src_ip, dst=e.dst_ip) / UDP(sport=30000 + i, dport=e.service_port)
            / Raw(iperf_udp_header(-(i + 100)) + bytes(100)) for i in range(16)]  # fmt: skip


def _seq_jump(e: Ends, r: random.Random) -> list[Packet]:
    """iperf 2 datagrams from the live UDP client's own address and port with sequence numbers far
    ahead (0x7ffffff0...): a server that believes them reports ~2^31 datagrams lost. Without a live
    flow: from the PC's address to the service port."""
    lv = e.live if e.live is not None and e.live.proto == "udp" else None
    sport, dport = (lv.pc_port, lv.dut_port) if lv is not None else (r.randrange(1024, 65536), e.service_port)
    return [_eth(e) / IP(src=e.src_ip, dst=e.dst_ip) / UDP(sport=sport, dport=dport)
            / Raw(iperf_udp_header(0x7FFFFFF0 + i) + bytes(100)) for i in range(4)]  # fmt: skip


def _live_tcp(e: Ends, r: random.Random) -> list[Packet]:
    """Segments into the live connection from its own addresses and ports (hil.robustness.live):
    a reset and a SYN inside the window but not at its edge (RFC 5961: a challenge ACK, never a
    reset), a reset and data outside it, an ACK of data never sent; without a live connection,
    the same shapes at the service port."""
    lv = e.live if e.live is not None and e.live.proto == "tcp" else None
    sport, dport = (lv.pc_port, lv.dut_port) if lv is not None else (r.randrange(1024, 65536), e.service_port)
    seq = lv.pc_next_seq if lv is not None and lv.pc_next_seq is not None else r.getrandbits(32)
    ack = lv.dut_next_seq if lv is not None and lv.dut_next_seq is not None else r.getrandbits(32)
    win = max(2, lv.dut_window or 2) if lv is not None else 2920
    inside = (seq + win // 2) % 2**32
    outside = (seq + 0x40000000) % 2**32

    def seg(flags: str, s: int, a: int, data: bytes = b"") -> Packet:
        return _eth(e) / IP(src=e.src_ip, dst=e.dst_ip) / TCP(sport=sport, dport=dport, flags=flags, seq=s, ack=a,
                                                               window=65535) / Raw(data)  # fmt: skip

    return [
        seg("R", inside, 0), seg("RA", inside, ack), seg("R", outside, 0), seg("S", inside, 0),
        seg("PA", outside, ack, r.randbytes(512)), seg("A", seq, (ack + 0x10000000) % 2**32),
        seg("PA", seq, (ack + 0x10000000) % 2**32, r.randbytes(64)), seg("F", outside, ack),
    ]  # fmt: skip


def _live_tcp_spoofed(e: Ends, r: random.Random) -> list[Packet]:
    """The same segments from an address nobody answers with the live connection's ports."""
    frames = _live_tcp(e, r)
    other = unanswered(e, r)
    for f in frames:
        f[IP].src = other
    return frames


def _forged() -> TrafficClass:
    systematic: tuple[tuple[str, Variant], ...] = (
        ("ICMP echo replies with the DUT's ping id, a wrong checksum", _reply_bad_checksum),
        ("ICMP echo replies with the DUT's ping id, another payload (checksum right)", _reply_other_payload),
        ("ICMP echo replies with the DUT's ping id, 8 bytes of payload", _reply_short_payload),
        ("iperf UDP server reports to the DUT's client from the wrong port", _report_wrong_port),
        ("iperf UDP server reports to the DUT's client from an address nobody answers", _report_wrong_address),
        ("iperf UDP FINs to the server's port from ports that ran no test", _fin_from_stranger),
        ("iperf UDP datagrams from the live client's address and port, sequence numbers 2^31 ahead", _seq_jump),
        ("segments into the live TCP connection: RST/SYN in the window, RST/data outside, ACK of unsent data",
         _live_tcp),
        ("the same segments from an address nobody answers", _live_tcp_spoofed),
    )  # fmt: skip
    fill: tuple[tuple[str, Variant], ...] = (
        ("ICMP echo replies with the DUT's ping id, another payload",
         lambda e, r: _echo_reply(e, r.randrange(1, 200), r.randbytes(PING_PAYLOAD))),
        ("ICMP echo replies with the DUT's ping id, a wrong checksum",
         lambda e, r: _echo_reply(e, r.randrange(1, 200), bytes(PING_PAYLOAD), chksum=r.getrandbits(16))),
    )  # fmt: skip
    return TrafficClass("forged", "forged replies and reports to the DUT's services", systematic, fill,
                        {"quick": 400, "full": 5000})  # fmt: skip


# --- fdb: a bridge's address table --------------------------------------------------------------


def _random_unicast(r: random.Random) -> str:
    b = bytearray(r.randbytes(6))
    b[0] = (b[0] & 0xFC) | 0x02  # locally administered, individual
    return ":".join(f"{x:02x}" for x in b)


def _l2(e: Ends, src: str, r: random.Random) -> Packet:
    return Ether(src=src, dst="ff:ff:ff:ff:ff:ff", type=LOCAL_EXPERIMENTAL) / Raw(r.randbytes(46))


OVERFLOW_SOURCES = 4000  # 2 s at the default 2,000 frames/s: twice as long as the firmware bridge keeps a quiet station


def _overflow(e: Ends, r: random.Random) -> list[Packet]:
    """A MAC flood long enough to outlast a full table's protection of the stations it has just
    heard (the firmware bridge's FW_BRIDGE_FDB_FULL_KEEP_MS, 1 s): an idle peer is evicted, so the
    poisoning that follows finds no entry and is learned; a talking peer keeps its entry."""
    return [_l2(e, _random_unicast(r), r) for _ in range(OVERFLOW_SOURCES)]


def _poison_peer(e: Ends, r: random.Random) -> list[Packet]:
    """Frames on the PC's side from the peer's address (the target behind the bridge): a bridge
    that moves the peer to the PC's port drops the PC's traffic to it."""
    return [_l2(e, e.dst_mac, r) for _ in range(32)]


def _poison_bridge(e: Ends, r: random.Random) -> list[Packet]:
    return [_l2(e, e.dut_mac, r) for _ in range(16)] if e.dut_mac else []


def _fdb() -> TrafficClass:
    systematic: tuple[tuple[str, Variant], ...] = (
        ("frames from 4,000 random unicast source addresses (the address table overflows)", _overflow),
        ("frames on the PC's side from the peer's address (the table poisoned)", _poison_peer),
        ("frames on the PC's side from the bridge's own address", _poison_bridge),
    )
    # the fill keeps the poisoned entry the last heard (random sources after it would evict it again)
    fill: tuple[tuple[str, Variant], ...] = (
        ("frames on the PC's side from the peer's address (the table poisoned)", lambda e, r: _l2(e, e.dst_mac, r)),
    )
    return TrafficClass("fdb", "a bridge's address table: overflow and poisoning", systematic, fill,
                        {"quick": 4200, "full": 10000})  # fmt: skip


SERVICE_CLASSES: dict[str, TrafficClass] = {c.name: c for c in (_exhaust(), _forged(), _fdb())}
IN_PATH_ONLY = frozenset({"fdb"})  # classes that need a DUT that bridges (an address table)
