"""The hostile and malformed traffic of the robustness family, built with scapy: one class of
frames per case (IPv4 header faults, fragments, TCP, UDP, ICMP, ARP, Ethernet, scapy's fuzz()).

Each class has its systematic variants (every flag combination, every ICMP type, each header fault
once...) and random fill up to the class's packet count; a variant is a named function of a random
generator, so a class's frames are the same for the same seed and addresses. What is built is
written to a PCAP and sent from it (hil.robustness.send): the file is the evidence and replays the
class exactly (`./suite replay`).

Addresses: frames go from the PC's interface (its MAC and address) to the target: the DUT, or the
peer host behind a DUT in the path (the frames then cross the DUT's forwarding path). Frames to
IEEE 802.1D's reserved group addresses (01:80:C2:00:00:00 ... 0F) are sent too: behind a DUT in the
path, the peer must see none of those a bridge never forwards (01 ... 0F; `is_reserved_group`).
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scapy.layers.inet import ICMP, IP, TCP, UDP, fragment
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether
from scapy.packet import Packet, Raw, fuzz

from hil.robustness.live import Live

BROADCAST = "ff:ff:ff:ff:ff:ff"
RESERVED_GROUP_PREFIX = bytes.fromhex("0180c20000")  # 01:80:C2:00:00:0X, X = 0..F (IEEE 802.1D)
IPERF_PORT = 5001
CLOSED_PORT = 9  # discard: nothing listens on the DUT
MTU_FRAME = 1514  # the largest untagged frame a 1500-byte MTU interface sends


@dataclass(frozen=True)
class Ends:
    """Who the frames are from and to."""

    src_mac: str  # the PC's interface
    src_ip: str
    dst_mac: str  # the target's (the DUT's, or the peer's behind a DUT in the path)
    dst_ip: str
    prefix_len: int = 24
    dut_ip: str | None = None  # the DUT's own address (behind a DUT in the path: its management address)
    dut_mac: str | None = None  # the DUT's own link address (a bridge's own)
    service_port: int = IPERF_PORT  # the port of the service the state runs (hil.robustness.states)
    live: Live | None = None  # the live connection of the state's test, as the wire showed it

    @property
    def subnet_broadcast(self) -> str:
        host = int.from_bytes(bytes(int(x) for x in self.dst_ip.split(".")), "big")
        mask = (0xFFFFFFFF << (32 - self.prefix_len)) & 0xFFFFFFFF
        b = (host & mask) | (~mask & 0xFFFFFFFF)
        return ".".join(str((b >> s) & 0xFF) for s in (24, 16, 8, 0))

    def ip_in_subnet(self, rng: random.Random) -> str:
        """A host address of the target's subnet, drawn at random."""
        net = ipaddress.IPv4Network(f"{self.dst_ip}/{self.prefix_len}", strict=False)
        return str(net.network_address + rng.randrange(1, max(2, net.num_addresses - 1)))


@dataclass(frozen=True)
class Frame:
    variant: str  # which fault, e.g. "ipv4 total length 65535 > frame"
    data: bytes


Variant = Callable[[Ends, random.Random], list[Packet] | Packet | bytes | list[bytes]]


@dataclass(frozen=True)
class TrafficClass:
    name: str  # the case id's part: robustness/<name>
    title: str
    systematic: tuple[tuple[str, Variant], ...]  # every variant once
    fill: tuple[tuple[str, Variant], ...]  # drawn at random up to the class's count
    counts: dict[str, int]  # frames per run profile (at least the systematic variants')


def _eth(e: Ends, dst: str | None = None) -> Ether:
    return Ether(src=e.src_mac, dst=dst or e.dst_mac)


def _ip(e: Ends, **fields: Any) -> IP:
    return IP(src=fields.pop("src", e.src_ip), dst=fields.pop("dst", e.dst_ip), **fields)


def _payload(rng: random.Random, n: int) -> Raw:
    return Raw(rng.randbytes(n))


def _with_ip_options(pkt: Packet, options: bytes) -> bytes:
    """The frame with raw IPv4 option bytes after the 20-byte header (IHL, total length and
    checksum fixed up), padded to a multiple of 4 as the IHL counts."""
    raw = bytearray(bytes(pkt))
    opts = options + b"\x00" * (-len(options) % 4)
    ip_at = 14
    header = raw[ip_at : ip_at + 20]
    header[0] = 0x40 | (5 + len(opts) // 4)
    total = len(raw) - ip_at + len(opts)
    header[2:4] = total.to_bytes(2, "big")
    header[10:12] = b"\x00\x00"
    header[10:12] = _checksum(bytes(header) + opts).to_bytes(2, "big")
    return bytes(raw[:ip_at]) + bytes(header) + opts + bytes(raw[ip_at + 20 :])


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    s = sum(int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def _udp_probe(e: Ends, rng: random.Random, **ip: Any) -> Packet:
    return _eth(e) / _ip(e, **ip) / UDP(sport=rng.randrange(1024, 65536), dport=CLOSED_PORT) / _payload(rng, 16)


# --- IPv4 header faults ------------------------------------------------------------------------


def _ipv4() -> TrafficClass:
    v: list[tuple[str, Variant]] = []
    for version in (0, 5, 6, 7, 15):
        v.append((f"version {version}", lambda e, r, k=version: _udp_probe(e, r, version=k)))
    for ihl in (0, 1, 4, 6, 15):  # below the minimum (5), and beyond the bytes present
        v.append((f"IHL {ihl}", lambda e, r, k=ihl: _udp_probe(e, r, ihl=k)))
    for length in (0, 19, 20, 27):
        v.append((f"total length {length} < frame", lambda e, r, k=length: _udp_probe(e, r, len=k)))
    for length in (1501, 9000, 65535):
        v.append((f"total length {length} > frame", lambda e, r, k=length: _udp_probe(e, r, len=k)))
    v.append(("total length one byte past the frame", lambda e, r: _udp_probe(e, r, len=20 + 8 + 16 + 1)))
    v.append(("bad header checksum", lambda e, r: _udp_probe(e, r, chksum=0xDEAD)))
    v.append(("header checksum 0", lambda e, r: _udp_probe(e, r, chksum=0)))
    v.append(("TTL 0 (echo)", lambda e, r: _eth(e) / _ip(e, ttl=0) / ICMP(id=r.randrange(65536)) / _payload(r, 8)))
    v.append(("TTL 0 (SYN)", lambda e, r: _eth(e) / _ip(e, ttl=0) / TCP(dport=IPERF_PORT, flags="S")))
    options = {
        "option length 0": b"\x44\x00",
        "option length 1": b"\x07\x01",
        "option length past the header": b"\x07\x28\x04",
        "record route, pointer out of range": b"\x07\x07\xff" + b"\x00" * 4,
        "timestamp, overflowed": b"\x44\x0c\x05\xf1" + b"\x00" * 8,
        "end of list, then garbage": b"\x00\xde\xad\xbe\xef\x01\x02",
        "40 bytes of NOP": b"\x01" * 40,
    }
    for name, raw in options.items():
        v.append((f"options: {name}", lambda e, r, o=raw: _with_ip_options(_udp_probe(e, r), o)))
    v.append(("options: random", lambda e, r: _with_ip_options(_udp_probe(e, r), r.randbytes(r.randrange(1, 41)))))
    v.append(
        (
            "source = destination = target (land)",
            lambda e, r: _eth(e) / _ip(e, src=e.dst_ip) / TCP(sport=IPERF_PORT, dport=IPERF_PORT, flags="S"),
        )
    )
    for src in ("255.255.255.255", "0.0.0.0", "224.0.0.1", "127.0.0.1"):
        v.append((f"source {src}", lambda e, r, s=src: _eth(e) / _ip(e, src=s) / ICMP() / _payload(r, 8)))
    v.append(
        (
            "to the subnet broadcast",
            lambda e, r: _eth(e, BROADCAST) / _ip(e, dst=e.subnet_broadcast) / ICMP() / _payload(r, 8),
        )
    )
    for proto in (0, 253, 255):
        v.append((f"protocol {proto}", lambda e, r, p=proto: _eth(e) / _ip(e, proto=p) / _payload(r, 24)))
    fill: list[tuple[str, Variant]] = [
        (
            "random header fields",
            lambda e, r: _udp_probe(
                e,
                r,
                version=r.choice((4, 4, 4, r.randrange(16))),
                ihl=r.randrange(16),
                len=r.randrange(65536),
                ttl=r.randrange(3),
            ),
        ),
    ]
    return TrafficClass("ipv4", "IPv4 header faults", tuple(v), tuple(fill), {"quick": 150, "full": 5000})


# --- fragments ---------------------------------------------------------------------------------


def _frag(e: Ends, ident: int, offset8: int, mf: bool, data: bytes, proto: int = 17) -> Packet:
    return _eth(e) / _ip(e, id=ident, frag=offset8, flags="MF" if mf else 0, proto=proto) / Raw(data)


def _overlapping(e: Ends, r: random.Random) -> list[Packet]:
    ident = r.randrange(65536)
    head = bytes(UDP(sport=4000, dport=CLOSED_PORT, len=8 + 48)) + r.randbytes(16)  # 24 bytes
    return [
        _frag(e, ident, 0, True, head),
        _frag(e, ident, 1, True, r.randbytes(32)),  # overlaps bytes 8..23
        _frag(e, ident, 2, False, r.randbytes(40)),
    ]


def _teardrop(e: Ends, r: random.Random) -> list[Packet]:
    ident = r.randrange(65536)  # the second fragment ends inside the first
    return [_frag(e, ident, 0, True, r.randbytes(48)), _frag(e, ident, 2, False, r.randbytes(8))]


def _tiny(e: Ends, r: random.Random) -> list[Packet]:
    ident = r.randrange(65536)  # the TCP header split across 8-byte fragments
    tcp = bytes(TCP(dport=IPERF_PORT, flags="S", options=[("MSS", 1460)]))
    return [_frag(e, ident, i // 8, i + 8 < len(tcp), tcp[i : i + 8], proto=6) for i in range(0, len(tcp), 8)]


def _never_completed(e: Ends, r: random.Random) -> list[Packet]:
    return [_frag(e, r.randrange(65536), 0, True, r.randbytes(1024)) for _ in range(16)]


def _past_64k(e: Ends, r: random.Random) -> list[Packet]:
    ident = r.randrange(65536)  # the last fragment ends at 65,512 + 100 bytes: past 65,535
    return [_frag(e, ident, 0, True, r.randbytes(1480)), _frag(e, ident, 8189, False, r.randbytes(100))]


def _ping_of_death(e: Ends, r: random.Random) -> list[Packet]:
    echo = _eth(e) / _ip(e, id=r.randrange(65536)) / ICMP(id=1, seq=1) / Raw(b"\xa5" * 65_520)
    return list(fragment(echo, fragsize=1480))


def _fragments() -> TrafficClass:
    v: list[tuple[str, Variant]] = [
        ("overlapping", _overlapping),
        ("overlapping, ending inside the first (teardrop)", _teardrop),
        ("tiny: the TCP header in 8-byte fragments", _tiny),
        ("never completed: 16 datagrams' first fragments", _never_completed),
        ("reassembling past 65,535 bytes", _past_64k),
        ("an echo of 65,548 bytes in fragments (ping of death)", _ping_of_death),
        ("zero-length fragment", lambda e, r: _frag(e, r.randrange(65536), 1, True, b"")),
        (
            "more fragments, length not a multiple of 8",
            lambda e, r: _frag(e, r.randrange(65536), 0, True, r.randbytes(13)),
        ),
        ("duplicate first fragments", lambda e, r: [_frag(e, 4242, 0, True, r.randbytes(64))] * 4),
        ("offset only, no first fragment", lambda e, r: _frag(e, r.randrange(65536), 100, False, r.randbytes(64))),
    ]
    fill: list[tuple[str, Variant]] = [
        (
            "random fragment",
            lambda e, r: _frag(
                e, r.randrange(65536), r.randrange(8192), r.random() < 0.7, r.randbytes(r.randrange(0, 1200))
            ),
        ),
    ]
    return TrafficClass("fragments", "IPv4 fragments", tuple(v), tuple(fill), {"quick": 200, "full": 5000})


# --- TCP ---------------------------------------------------------------------------------------


def _tcp(e: Ends, r: random.Random, **fields: Any) -> Packet:
    fields.setdefault("sport", r.randrange(1024, 65536))
    fields.setdefault("seq", r.randrange(1 << 32))
    return _eth(e) / _ip(e) / TCP(**fields)


def _tcp_raw_options(e: Ends, r: random.Random, options: bytes) -> bytes:
    """A SYN whose option bytes are exactly `options` (data offset to match, padded)."""
    opts = options + b"\x00" * (-len(options) % 4)
    return bytes(_tcp(e, r, dport=IPERF_PORT, flags="S", dataofs=5 + len(opts) // 4) / Raw(opts))


def _tcp_class() -> TrafficClass:
    v: list[tuple[str, Variant]] = []
    for port, where in ((IPERF_PORT, "the iperf port"), (CLOSED_PORT, "a closed port")):
        v.append(
            (
                f"every flag combination to {where}",
                lambda e, r, p=port: [_tcp(e, r, dport=p, flags=f, ack=r.randrange(1 << 32)) for f in range(256)],
            )
        )
    options = {
        "MSS 0": b"\x02\x04\x00\x00",
        "MSS option length 0": b"\x02\x00",
        "MSS option length 1": b"\x02\x01",
        "option length past the header": b"\x02\x28\x05\xb4",
        "window scale 255": b"\x03\x03\xff",
        "SACK permitted with length 10": b"\x04\x0a" + b"\x00" * 8,
        "timestamp of length 3": b"\x08\x03\x00",
        "unknown option 0xfe, length 2": b"\xfe\x02",
        "end of list, then garbage": b"\x00\xde\xad\xbe\xef\x01\x02\x03",
    }
    for name, raw in options.items():
        v.append((f"options: {name}", lambda e, r, o=raw: _tcp_raw_options(e, r, o)))
    v.append(("options: random", lambda e, r: _tcp_raw_options(e, r, r.randbytes(r.randrange(1, 41)))))
    for dataofs in (0, 4, 15):
        v.append((f"data offset {dataofs}", lambda e, r, d=dataofs: _tcp(e, r, dport=IPERF_PORT, flags="S", dataofs=d)))
    v.append(("SYN flood: 64 source ports", lambda e, r: [_tcp(e, r, dport=IPERF_PORT, flags="S") for _ in range(64)]))
    v.append(("RST outside the window", lambda e, r: _tcp(e, r, dport=IPERF_PORT, flags="R")))
    v.append(("ACK outside the window", lambda e, r: _tcp(e, r, dport=IPERF_PORT, flags="A", ack=r.randrange(1 << 32))))
    v.append(
        (
            "data to a closed port",
            lambda e, r: (
                _tcp(e, r, dport=r.randrange(10000, 60000), flags="PA", ack=r.randrange(1 << 32)) / _payload(r, 100)
            ),
        )
    )
    v.append(
        (
            "urgent pointer past the data",
            lambda e, r: _tcp(e, r, dport=IPERF_PORT, flags="UA", urgptr=65535) / _payload(r, 4),
        )
    )
    v.append(("bad checksum", lambda e, r: _tcp(e, r, dport=IPERF_PORT, flags="S", chksum=0xBEEF)))
    v.append(("source port 0, destination port 0", lambda e, r: _tcp(e, r, sport=0, dport=0, flags="S")))
    fill: list[tuple[str, Variant]] = [
        ("SYN from a random port", lambda e, r: _tcp(e, r, dport=IPERF_PORT, flags="S")),
        (
            "random flags to a random port",
            lambda e, r: _tcp(
                e,
                r,
                dport=r.randrange(65536),
                flags=r.randrange(256),
                ack=r.randrange(1 << 32),
                window=r.randrange(65536),
            ),
        ),
    ]
    return TrafficClass("tcp", "TCP flags, options and floods", tuple(v), tuple(fill), {"quick": 700, "full": 5000})


# --- UDP ---------------------------------------------------------------------------------------


def _udp(e: Ends, r: random.Random, payload: int = 16, **fields: Any) -> Packet:
    fields.setdefault("sport", r.randrange(1024, 65536))
    fields.setdefault("dport", CLOSED_PORT)
    return _eth(e) / _ip(e) / UDP(**fields) / _payload(r, payload)


def _udp_class() -> TrafficClass:
    v: list[tuple[str, Variant]] = [
        ("closed port", lambda e, r: _udp(e, r, dport=r.randrange(10000, 60000))),
        ("to the iperf port, garbage", lambda e, r: _udp(e, r, r.randrange(0, 1400), dport=IPERF_PORT)),
        ("to the iperf port, 1 byte", lambda e, r: _udp(e, r, 1, dport=IPERF_PORT)),
        ("port 0", lambda e, r: _udp(e, r, sport=0, dport=0)),
        ("bad checksum", lambda e, r: _udp(e, r, chksum=0xBAD1)),
        ("checksum 0 (none)", lambda e, r: _udp(e, r, chksum=0)),
        (
            "to the broadcast address",
            lambda e, r: (
                _eth(e, BROADCAST)
                / _ip(e, dst="255.255.255.255")
                / UDP(sport=r.randrange(1024, 65536), dport=IPERF_PORT)
                / _payload(r, 32)
            ),
        ),
        (
            "to the subnet broadcast",
            lambda e, r: (
                _eth(e, BROADCAST)
                / _ip(e, dst=e.subnet_broadcast)
                / UDP(sport=r.randrange(1024, 65536), dport=CLOSED_PORT)
                / _payload(r, 32)
            ),
        ),
    ]
    for length in (0, 1, 7):
        v.append((f"length field {length} (< header)", lambda e, r, k=length: _udp(e, r, len=k)))
    for length in (25, 1000, 65535):
        v.append((f"length field {length} (> datagram)", lambda e, r, k=length: _udp(e, r, len=k)))
    v.append(("length field < payload", lambda e, r: _udp(e, r, 200, len=20)))
    fill: list[tuple[str, Variant]] = [
        (
            "random length field and checksum",
            lambda e, r: _udp(
                e,
                r,
                r.randrange(0, 600),
                dport=r.choice((IPERF_PORT, CLOSED_PORT, r.randrange(65536))),
                len=r.randrange(65536),
                chksum=r.randrange(65536),
            ),
        ),
    ]
    return TrafficClass("udp", "UDP ports, lengths and checksums", tuple(v), tuple(fill), {"quick": 150, "full": 5000})


# --- ICMP --------------------------------------------------------------------------------------


def _icmp(e: Ends, r: random.Random, payload: bytes | None = None, **fields: Any) -> Packet:
    quoted = bytes(_ip(e, src=e.dst_ip, dst=e.src_ip) / UDP(sport=CLOSED_PORT, dport=r.randrange(65536)))
    return _eth(e) / _ip(e) / ICMP(**fields) / Raw(payload if payload is not None else quoted)


def _icmp_class() -> TrafficClass:
    v: list[tuple[str, Variant]] = [
        ("every type (code 0)", lambda e, r: [_icmp(e, r, type=t, code=0) for t in range(256)]),
    ]
    for kind, name in (
        (3, "destination unreachable"),
        (5, "redirect"),
        (11, "time exceeded"),
        (12, "parameter problem"),
    ):
        v.append((f"{name}: codes 0..15", lambda e, r, t=kind: [_icmp(e, r, type=t, code=c) for c in range(16)]))
    v.append(("redirect to a random gateway", lambda e, r: _icmp(e, r, type=5, code=1, gw=e.ip_in_subnet(r))))
    v.append(
        (
            "echo request of 4,000 bytes (fragments)",
            lambda e, r: list(
                fragment(_eth(e) / _ip(e, id=r.randrange(65536)) / ICMP(id=2) / Raw(r.randbytes(4000)), fragsize=1480)
            ),
        )
    )
    v.append(("echo request, a full frame", lambda e, r: _icmp(e, r, r.randbytes(1472), type=8)))
    v.append(("echo request, bad checksum", lambda e, r: _icmp(e, r, b"x" * 32, type=8, chksum=0x1234)))
    v.append(("echo request, 0 bytes after the type", lambda e, r: _eth(e) / _ip(e, proto=1) / Raw(b"\x08")))
    v.append(
        (
            "echo request to the broadcast address",
            lambda e, r: _eth(e, BROADCAST) / _ip(e, dst="255.255.255.255") / ICMP(type=8) / _payload(r, 16),
        )
    )
    fill: list[tuple[str, Variant]] = [
        (
            "random type and code",
            lambda e, r: _icmp(e, r, r.randbytes(r.randrange(0, 200)), type=r.randrange(256), code=r.randrange(256)),
        ),
    ]
    return TrafficClass(
        "icmp", "ICMP types, codes, redirects, oversized echo", tuple(v), tuple(fill), {"quick": 450, "full": 5000}
    )


# --- ARP ---------------------------------------------------------------------------------------


def _bogus_mac(r: random.Random) -> str:
    return "02:de:ad:" + ":".join(f"{r.randrange(256):02x}" for _ in range(3))


def _arp(e: Ends, **fields: Any) -> ARP:
    """An ARP packet from the PC (its MAC and address, never what scapy would fill in from the
    host's own routes) to the target, with `fields` on top."""
    return ARP(**{"hwsrc": e.src_mac, "psrc": e.src_ip, "pdst": e.dst_ip, **fields})


def _arp_class() -> TrafficClass:
    v: list[tuple[str, Variant]] = [
        (
            "gratuitous request claiming the target's address",
            lambda e, r: (
                Ether(src=_bogus_mac(r), dst=BROADCAST) / ARP(op=1, hwsrc=_bogus_mac(r), psrc=e.dst_ip, pdst=e.dst_ip)
            ),
        ),
        (
            "gratuitous reply claiming the target's address",
            lambda e, r: (
                Ether(src=_bogus_mac(r), dst=BROADCAST)
                / ARP(op=2, hwsrc=_bogus_mac(r), psrc=e.dst_ip, hwdst=BROADCAST, pdst=e.dst_ip)
            ),
        ),
        (
            "reply poisoning the target's entry for the PC",
            lambda e, r: _eth(e) / ARP(op=2, hwsrc=_bogus_mac(r), psrc=e.src_ip, hwdst=e.dst_mac, pdst=e.dst_ip),
        ),
        ("hardware address length 0", lambda e, r: _eth(e, BROADCAST) / _arp(e, hwlen=0)),
        ("protocol address length 16", lambda e, r: _eth(e, BROADCAST) / _arp(e, plen=16)),
        (
            "hardware type 6, protocol IPv6",
            lambda e, r: _eth(e, BROADCAST) / _arp(e, hwtype=6, ptype=0x86DD),
        ),
        ("truncated after 10 bytes", lambda e, r: bytes(_eth(e, BROADCAST) / _arp(e))[:24]),
        (
            "request from the broadcast MAC",
            lambda e, r: _eth(e, BROADCAST) / ARP(hwsrc=BROADCAST, psrc=e.ip_in_subnet(r), pdst=e.dst_ip),
        ),
    ]
    for op in (0, 3, 4, 8, 9, 0xFFFF):
        v.append((f"opcode {op}", lambda e, r, o=op: _eth(e, BROADCAST) / _arp(e, op=o)))
    fill: list[tuple[str, Variant]] = [
        (
            "storm: a request for another address",
            lambda e, r: (
                Ether(src=_bogus_mac(r), dst=BROADCAST)
                / ARP(op=1, hwsrc=_bogus_mac(r), psrc=e.ip_in_subnet(r), pdst=e.ip_in_subnet(r))
            ),
        ),
        (
            "storm: a request for the target from another host",
            lambda e, r: (
                Ether(src=_bogus_mac(r), dst=BROADCAST)
                / ARP(op=1, hwsrc=_bogus_mac(r), psrc=e.ip_in_subnet(r), pdst=e.dst_ip)
            ),
        ),
    ]
    return TrafficClass(
        "arp", "ARP storm, gratuitous ARP, poisoning", tuple(v), tuple(fill), {"quick": 300, "full": 5000}
    )


# --- Ethernet ----------------------------------------------------------------------------------


def _ethernet_class() -> TrafficClass:
    def runts(e: Ends, r: random.Random) -> list[bytes]:
        head = bytes(_eth(e))[:12] + b"\x08\x00"
        return [head + r.randbytes(n) for n in range(0, 46, 3)]

    def reserved(e: Ends, r: random.Random) -> list[bytes]:
        return [
            bytes(Ether(src=e.src_mac, dst=f"01:80:c2:00:00:{x:02x}", type=0x88B5) / _payload(r, 46)) for x in range(16)
        ]

    echo = lambda e, r: _ip(e) / ICMP(type=8, id=3) / _payload(r, 16)  # noqa: E731
    v: list[tuple[str, Variant]] = [
        ("runt frames (14..59 bytes)", runts),
        ("a full 1514-byte frame", lambda e, r: _eth(e) / _ip(e) / UDP(dport=CLOSED_PORT) / _payload(r, 1472)),
        (
            "oversized: 1515, 1518, 1600 and 9000 bytes",
            lambda e, r: [
                bytes(_eth(e) / _ip(e) / UDP(dport=CLOSED_PORT) / _payload(r, n - 42)) for n in (1515, 1518, 1600, 9000)
            ],
        ),
        ("802.1Q tag, VLAN 0 (priority)", lambda e, r: _eth(e) / Dot1Q(vlan=0) / echo(e, r)),
        ("802.1Q tag, VLAN 100", lambda e, r: _eth(e) / Dot1Q(vlan=100) / echo(e, r)),
        ("802.1Q tag, VLAN 4095", lambda e, r: _eth(e) / Dot1Q(vlan=4095) / echo(e, r)),
        ("802.1ad + 802.1Q (QinQ)", lambda e, r: _eth(e) / Dot1AD(vlan=10) / Dot1Q(vlan=20) / echo(e, r)),
        ("IPv6 echo to a stack without IPv6", lambda e, r: _eth(e) / IPv6(dst="fe80::2") / ICMPv6EchoRequest()),
        (
            "IPv6 to all nodes",
            lambda e, r: Ether(src=e.src_mac, dst="33:33:00:00:00:01") / IPv6(dst="ff02::1") / ICMPv6EchoRequest(),
        ),
        ("source MAC broadcast", lambda e, r: Ether(src=BROADCAST, dst=e.dst_mac) / echo(e, r)),
        ("source MAC multicast", lambda e, r: Ether(src="01:00:5e:00:00:01", dst=e.dst_mac) / echo(e, r)),
        ("to IEEE 802.1D reserved group addresses 01:80:C2:00:00:00..0F", reserved),
        ("broadcast, garbage", lambda e, r: Ether(src=e.src_mac, dst=BROADCAST, type=0x88B5) / _payload(r, 64)),
    ]
    for ethertype in (0x0000, 0x05DC, 0x0600, 0x1234, 0x8808, 0x88CC, 0xFFFF):
        v.append(
            (
                f"EtherType 0x{ethertype:04x}",
                lambda e, r, t=ethertype: Ether(src=e.src_mac, dst=e.dst_mac, type=t) / _payload(r, 50),
            )
        )
    fill: list[tuple[str, Variant]] = [
        (
            "random EtherType",
            lambda e, r: (
                Ether(src=e.src_mac, dst=e.dst_mac, type=r.randrange(0x0600, 0x10000))
                / _payload(r, r.randrange(46, 200))
            ),
        ),
        ("random bytes after the addresses", lambda e, r: bytes(_eth(e))[:12] + r.randbytes(r.randrange(2, 200))),
    ]
    return TrafficClass(
        "ethernet",
        "Ethernet runts, oversize, VLAN tags, EtherTypes, IPv6",
        tuple(v),
        tuple(fill),
        {"quick": 150, "full": 5000},
    )


# --- fuzz --------------------------------------------------------------------------------------


def _fuzzed(e: Ends, r: random.Random, layer: Packet) -> bytes:
    # the addresses and the version stay (the frames reach the target's IPv4 input); the rest is fuzzed
    return bytes(_eth(e) / fuzz(_ip(e, version=4) / layer))


def _fuzz_class() -> TrafficClass:
    fill: list[tuple[str, Variant]] = [
        ("fuzz(IP/TCP)", lambda e, r: _fuzzed(e, r, TCP())),
        ("fuzz(IP/UDP)", lambda e, r: _fuzzed(e, r, UDP())),
        ("fuzz(IP/ICMP)", lambda e, r: _fuzzed(e, r, ICMP())),
        ("fuzz(IP)", lambda e, r: _fuzzed(e, r, Raw(r.randbytes(r.randrange(0, 64))))),
    ]
    return TrafficClass(
        "fuzz", "scapy's fuzz() over IP, TCP, UDP, ICMP", (), tuple(fill), {"quick": 1000, "full": 100_000}
    )


CLASSES: dict[str, TrafficClass] = {
    c.name: c
    for c in (
        _ipv4(),
        _fragments(),
        _tcp_class(),
        _udp_class(),
        _icmp_class(),
        _arp_class(),
        _ethernet_class(),
        _fuzz_class(),
    )
}
# the classes that aim at the DUT's services while they run (exhaust, forged, fdb): their module
# builds on this one's frames and types, so it is imported once those exist
from hil.robustness.service_classes import SERVICE_CLASSES  # noqa: E402

CLASSES.update(SERVICE_CLASSES)


def _frames(variant: str, made: object) -> list[Frame]:
    items = made if isinstance(made, list) else [made]
    return [Frame(variant, item if isinstance(item, bytes) else bytes(item)) for item in items]


def systematic_frames(cls: TrafficClass, ends: Ends, seed: int) -> list[Frame]:
    rng = random.Random(f"{seed}/{cls.name}/systematic")
    _seed_scapy(rng)
    return [f for name, make in cls.systematic for f in _frames(name, make(ends, rng))]


def build(cls: TrafficClass, ends: Ends, count: int, seed: int) -> list[Frame]:
    """The class's frames: every systematic variant (evenly thinned when `count` is smaller than
    them), then random fill up to `count`; the same for the same seed and addresses."""
    if count < 1:
        raise ValueError(f"a robustness class needs at least one frame (got {count})")
    frames = systematic_frames(cls, ends, seed)
    if len(frames) > count:
        step = len(frames) / count
        return [frames[int(i * step)] for i in range(count)]
    rng = random.Random(f"{seed}/{cls.name}/fill")
    _seed_scapy(rng)
    while len(frames) < count and cls.fill:
        name, make = cls.fill[rng.randrange(len(cls.fill))]
        frames += _frames(name, make(ends, rng))[: count - len(frames)]
    return frames


def _seed_scapy(rng: random.Random) -> None:
    """scapy's random fields (fuzz(), unset ids) draw from the `random` module: seeded for repeatability."""
    random.seed(rng.random())


def is_reserved_group(frame: bytes) -> bool:
    """A frame a bridge must not forward: to one of IEEE 802.1D's reserved group addresses
    01:80:C2:00:00:01 ... 0F (MAC control/pause, slow protocols, port authentication, LLDP, ...).
    01:80:C2:00:00:00 (spanning-tree BPDUs) is not one of them here: a bridge that runs no spanning
    tree forwards BPDUs so that the bridges around it still see a loop (Linux with stp_state 0)."""
    return len(frame) >= 6 and frame[:5] == RESERVED_GROUP_PREFIX and 0x01 <= frame[5] <= 0x0F
