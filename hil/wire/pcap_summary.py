"""A tcpdump capture (Ethernet, headers only: ``-s 128``) summarized per direction as a reviewer of a
throughput test reads it: TCP retransmissions, holes, dup ACKs, zero windows and SYN MSS options; UDP
flows with what their sequence numbers say (iperf 2, iperf 3, the stream peer's header).

A classic pcap file (what tcpdump writes) is read record by record with struct, from any mark
(`mark`: the records before a place and its byte offset), so a window's slice is read alone and a
capture still being written is counted from where it was last counted; other files (pcapng) go
through scapy's RawPcapNgReader. Dissecting with scapy (~125 us a packet) would be too slow for
30,000, so the headers are decoded with struct and only SYN options go through scapy's TCP layer."""

from __future__ import annotations

import logging
import os
import socket
import struct
from collections.abc import Generator, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import BinaryIO

from scapy.data import MTU
from scapy.error import Scapy_Exception
from scapy.layers.inet import TCP
from scapy.utils import RawPcapNgReader, RawPcapReader

from hil.traffic.stream_peer import HEADER as STREAM_HEADER
from hil.traffic.stream_peer import MAGIC as STREAM_MAGIC

_IPV4 = struct.Struct("!BxH2xHxB")  # version/IHL, total length, flags/fragment offset, protocol
_TCP = struct.Struct("!HHIIHH")  # ports, seq, ack, data offset/flags, window
_UDP = struct.Struct("!HHH")  # ports, length
_I32, _U32 = struct.Struct("!i"), struct.Struct("!I")
_FIN, _SYN, _RST, _ACK = 0x01, 0x02, 0x04, 0x10
_M32, _HALF = 0xFFFFFFFF, 0x80000000
_DETECT = 64  # datagrams of a flow its sequence format is detected on
_HEAD = 28  # payload bytes kept per datagram: enough for every format's sequence number


@dataclass
class Direction:
    """One direction's traffic: `src` -> `dst` (IPv4 addresses as dotted strings)."""

    src: str
    dst: str
    packets: int = 0  # every IPv4 packet from src to dst
    ip_bytes: int = 0  # sum of IP total lengths
    tcp_segments: int = 0
    tcp_payload_segments: int = 0
    tcp_payload_bytes: int = 0
    tcp_new_bytes: int = 0  # payload bytes beyond the connection's highest seq so far: each byte once
    retransmissions: int = 0  # payload wholly at or below the connection's highest seq+len (mod 2**32)
    out_of_order: int = 0  # payload starting beyond it: a hole before the capture point
    dup_acks: int = 0  # pure ACKs repeating this side's previous ACK number and (non-zero) window
    zero_windows: int = 0  # window 0 advertised (RST excluded)
    syn_mss: list[int] = field(default_factory=list)  # MSS option of each SYN / SYN-ACK, in order
    largest_tcp_payload: int = 0
    udp_datagrams: int = 0
    udp_payload_bytes: int = 0
    largest_udp_payload: int = 0


@dataclass
class UdpFlow:
    """One UDP flow (src, sport) -> (dst, dport) and what its payload's sequence numbers say."""

    src: str
    sport: int
    dst: str
    dport: int
    datagrams: int = 0
    payload_bytes: int = 0
    seq_format: str | None = None  # "iperf2" | "iperf3" | "stream" | None (not numbered)
    first_seq: int | None = None
    last_seq: int | None = None
    missing: int = 0  # sequence numbers between first and last never seen
    distinct: int = 0  # distinct sequence numbers seen (iperf 2's end marker not one of them)
    duplicates: int = 0
    reordered: int = 0  # arrived after a higher sequence number
    times: list[float] = field(default_factory=list)  # capture time of each datagram (s), capture order
    bursts: list[int] = field(default_factory=list)  # "stream" only, parallel to times (-1: no header)
    indexes: list[int] = field(default_factory=list)  # "stream" only: index in burst (-1: no header)

    @property
    def name(self) -> str:
        return f"{self.src}:{self.sport}->{self.dst}:{self.dport}"


_FIELDS = ("packets", "ip_bytes", "tcp_payload_bytes", "tcp_new_bytes", "retransmissions", "out_of_order", "dup_acks",
           "zero_windows", "syn_mss", "largest_tcp_payload", "udp_datagrams", "largest_udp_payload")  # fmt: skip
_ROWS = (("packets", "packets"), ("IP bytes", "ip_bytes"), ("TCP segments", "tcp_segments"),
         ("TCP payload segments", "tcp_payload_segments"), ("TCP payload bytes", "tcp_payload_bytes"),
         ("TCP bytes, each once", "tcp_new_bytes"),
         ("retransmissions", "retransmissions"), ("out of order (holes)", "out_of_order"),
         ("dup ACKs", "dup_acks"), ("zero windows", "zero_windows"), ("SYN MSS", "syn_mss"),
         ("largest TCP payload", "largest_tcp_payload"), ("UDP datagrams", "udp_datagrams"),
         ("UDP payload bytes", "udp_payload_bytes"), ("largest UDP payload", "largest_udp_payload"))  # fmt: skip


@dataclass
class WireSummary:
    path: str
    packets: int  # every record of the slice read
    first_time: float | None
    last_time: float | None
    truncated_at_cap: bool = False  # set by the caller: the capture stopped at its packet cap
    directions: dict[tuple[str, str], Direction] = field(default_factory=dict)  # keyed (src, dst)
    udp_flows: list[UdpFlow] = field(default_factory=list)
    other_frames: int = 0  # non-IPv4 frames (ARP, IPv6, ...)

    def direction(self, src: str, dst: str) -> Direction:
        """The traffic from `src` to `dst` (an empty Direction if none)."""
        return self.directions.get((src, dst)) or Direction(src, dst)

    def as_fields(self, near: str, far: str) -> dict[str, object]:
        """For results.jsonl: the non-zero counters of "near->far" and "far->near" (near: the PC's address)
        and each numbered UDP flow's sequence analysis (no times)."""
        out: dict[str, object] = {"packets": self.packets}
        if self.truncated_at_cap:
            out["truncated_at_cap"] = True
        for name, src, dst in (("near->far", near, far), ("far->near", far, near)):
            d = self.direction(src, dst)
            out[name] = {k: list(v) if isinstance(v, list) else v for k in _FIELDS if (v := getattr(d, k))}
        keys = ("datagrams", "missing", "duplicates", "reordered")
        flows = [
            {"flow": f.name, "format": f.seq_format} | {k: getattr(f, k) for k in keys}
            for f in self.udp_flows
            if f.seq_format
        ]
        if flows:
            out["udp_flows"] = flows
        return out

    def text(self, near: str, far: str, *, near_name: str = "PC", far_name: str = "far end") -> str:
        """The human summary: header, one block per direction between near and far, the UDP flows, and
        the packet counts of any other traffic. Deterministic, aligned, no trailing spaces."""
        first, last = self.first_time, self.last_time
        duration = last - first if first is not None and last is not None else 0.0
        state = "stopped at its packet cap: later packets not captured" if self.truncated_at_cap else "complete"
        lines = [f"capture {Path(self.path).name}: {self.packets} packets in {duration:.3f} s ({state})"]
        for src, dst, sname, dname in ((near, far, near_name, far_name), (far, near, far_name, near_name)):
            d = self.direction(src, dst)
            values = [(label, getattr(d, attr)) for label, attr in _ROWS]
            shown = [(label, (", ".join(map(str, v)) or "-") if isinstance(v, list) else str(v)) for label, v in values]
            width = max(len(v) for _, v in shown)
            lines.append(f"{sname} {src} -> {dname} {dst}")
            lines += [f"  {label:<22}{value:>{width}}" for label, value in shown]
        if self.udp_flows:
            lines.append("UDP flows")
            nw = max(len(f.name) for f in self.udp_flows)
            dw = max(len(str(f.datagrams)) for f in self.udp_flows)
            for f in self.udp_flows:
                seq = "not numbered"
                if f.seq_format:
                    seq = f"{f.seq_format} seq {f.first_seq}..{f.last_seq}: missing {f.missing}, "
                    seq += f"duplicates {f.duplicates}, reordered {f.reordered}"
                unit = "datagram" if f.datagrams == 1 else "datagrams"
                lines.append(f"  {f.name:<{nw}}  {f.datagrams:>{dw}} {unit:<9}  {seq}")
        others = [f"{s} -> {d} {x.packets}" for (s, d), x in sorted(self.directions.items()) if {s, d} != {near, far}]
        if self.other_frames:
            others.append(f"non-IPv4 frames {self.other_frames}")
        if others:
            lines.append("other traffic (packets): " + "; ".join(others))
        return "\n".join(line.rstrip() for line in lines)


@dataclass(frozen=True)
class PcapMark:
    """A place in a capture file: the complete records before it and the byte offset of the next
    record (None: not a classic pcap file, whose records are only counted)."""

    records: int
    offset: int | None


_CLASSIC = {b"\xd4\xc3\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">", b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\x3c\x4d": ">"}
_NANO = (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
_FILE_HEADER = 24


def classic_header(path: Path, head: bytes) -> tuple[struct.Struct, float] | None:
    """(record header struct, timestamp scale) of a classic pcap file, None for another format."""
    endian = _CLASSIC.get(head[:4])
    if endian is None:
        return None
    if len(head) < _FILE_HEADER:
        raise ValueError(f"{path}: not a pcap capture file (its header is cut short)")
    if (linktype := struct.unpack(f"{endian}I", head[20:24])[0] & 0xFFFF) != 1:
        raise ValueError(f"{path}: link type {linktype}, not Ethernet")
    return struct.Struct(f"{endian}IIII"), 1e-9 if head[:4] in _NANO else 1e-6


def classic_records(
    buf: bytes, header: struct.Struct, scale: float
) -> Generator[tuple[bytes, float, int, int], None, None]:
    """(frame bytes, capture time, original length, the byte after it) of each complete record in
    `buf`, classic pcap records from their first; stops at one cut short (tcpdump killed, or still
    writing). What a file is read with, and what a follower (hil.wire.follow) reads as it grows."""
    pos, end = 0, len(buf)
    while pos + 16 <= end:
        sec, frac, incl, orig = header.unpack_from(buf, pos)
        if pos + 16 + incl > end:
            return
        yield buf[pos + 16 : pos + 16 + incl], sec + frac * scale, orig, pos + 16 + incl
        pos += 16 + incl


def _records(path: Path, start: PcapMark | None = None) -> Generator[tuple[bytes, float, int], None, None]:
    """(frame bytes, capture time, original length) of each complete record from `start` (the
    file's first by default); stops at a truncated last one."""
    with path.open("rb") as f:
        classic = classic_header(path, f.read(_FILE_HEADER))
        if classic is None:
            yield from _scapy_records(path, f, start.records if start else 0)
            return
        f.seek(start.offset if start is not None and start.offset is not None else _FILE_HEADER)
        buf = f.read()
    for data, ts, orig, _ in classic_records(buf, *classic):
        yield data, ts, orig


def _scapy_records(path: Path, f: BinaryIO, skip: int) -> Generator[tuple[bytes, float, int], None, None]:
    """A file that is not classic pcap through scapy's readers (pcapng), its first `skip` records left out."""
    f.seek(0)
    with _quiet_truncation():
        try:
            reader = RawPcapReader(f)  # type: ignore[arg-type]  # a file object: closed by the caller
        except Scapy_Exception as e:
            raise ValueError(f"{path}: not a pcap capture file ({e})") from None
        if getattr(reader, "linktype", 1) != 1:
            raise ValueError(f"{path}: link type {reader.linktype}, not Ethernet")
        index = 0
        while True:
            try:
                data, meta = next(reader)
            except (StopIteration, Scapy_Exception, struct.error):  # the end, or a pcapng block cut short
                return
            index += 1
            if index <= skip:
                continue
            if isinstance(meta, RawPcapNgReader.PacketMetadata):
                yield data, ((meta.tshigh << 32) | meta.tslow) / meta.tsresol, meta.wirelen
            elif len(data) >= min(meta.caplen, MTU):
                yield data, meta.sec + meta.usec * 1e-6, meta.wirelen
            else:
                return


@contextmanager
def _quiet_truncation() -> Iterator[None]:
    """Without scapy's warning about the record cut short: expected of a capture still being written."""
    log = logging.getLogger("scapy.runtime")

    def quiet(record: logging.LogRecord) -> bool:
        return "has been truncated" not in record.getMessage()

    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)


def mark(path: Path, since: PcapMark | None = None) -> PcapMark:
    """The place after the last complete record of a capture file, counted on from `since` (a mark
    of the same file taken earlier: the records before it are not read again). A classic pcap file
    is counted by its record headers alone, each record's bytes skipped, not read."""
    with path.open("rb") as f:
        classic = classic_header(path, f.read(_FILE_HEADER))
        if classic is None or (since is not None and since.offset is None):
            return PcapMark(sum(1 for _ in _records(path)), None)
        header = classic[0]
        size = os.fstat(f.fileno()).st_size
        n, offset = (
            (since.records, since.offset) if since is not None and since.offset is not None else (0, _FILE_HEADER)
        )
        f.seek(offset)
        while len(head := f.read(16)) == 16:
            incl = header.unpack(head)[2]
            if offset + 16 + incl > size:
                break
            offset += 16 + incl
            f.seek(offset)
            n += 1
        return PcapMark(n, offset)


def count_records(path: Path) -> int:
    """The complete records in a pcap file (none decoded; a truncated last record is not counted)."""
    return mark(path).records


def _syn_mss(header: bytes) -> int | None:
    """The MSS option of a TCP header with its options (scapy parses them)."""
    try:
        parsed = TCP(header).options
    except Exception:  # options cut by the snap length
        return None
    return next((v for k, v in parsed if k == "MSS" and isinstance(v, int)), None)


class Summarizer:
    """A capture's summary built record by record (`feed`), readable at any point (`summary`):
    what `summarize_pcap` makes of a file, and what a follower (hil.wire.follow) makes of a capture
    while it is being written. TCP state (highest seq+len, previous ACK and window) is per
    connection and direction, fresh at the first record fed."""

    def __init__(self, path: Path) -> None:
        self.s = WireSummary(str(path), 0, None, None)
        self.dirs: dict[bytes, Direction] = {}
        self.conns: dict[bytes, list[int]] = {}  # src+dst+ports -> [highest seq+len (-1: none), last ack, last window]
        self.flows: dict[bytes, tuple[UdpFlow, list[bytes]]] = {}  # src+dst+ports -> (flow, payload heads)

    def feed(self, data: bytes, ts: float, wirelen: int) -> None:
        s = self.s
        s.packets += 1
        if s.first_time is None:
            s.first_time = ts
        s.last_time = ts
        o = 14
        etype = data[12] << 8 | data[13] if len(data) >= 14 else 0
        if etype == 0x8100 and len(data) >= 18:
            etype, o = data[16] << 8 | data[17], 18
        if etype != 0x0800 or len(data) < o + 20 or data[o] >> 4 != 4:
            s.other_frames += 1
            return
        vihl, total, frag, proto = _IPV4.unpack_from(data, o)
        total = total or wirelen - o  # 0: a TSO super-packet over 64 KiB
        ihl = (vihl & 15) * 4
        key = data[o + 12 : o + 20]
        d = self.dirs.get(key)
        if d is None:
            d = self.dirs[key] = Direction(socket.inet_ntoa(key[:4]), socket.inet_ntoa(key[4:]))
        d.packets += 1
        d.ip_bytes += total
        l4 = o + ihl
        if frag & 0x1FFF:  # a later fragment: no transport header
            return
        if proto == 6 and len(data) >= l4 + 20:
            _sport, _dport, seq, ack, offflags, win = _TCP.unpack_from(data, l4)
            doff, flags = (offflags >> 12) * 4, offflags & 0x3F
            plen = max(0, total - ihl - doff)
            d.tcp_segments += 1
            st = self.conns.setdefault(key + data[l4 : l4 + 4], [-1, -1, -1])
            if plen:
                d.tcp_payload_segments += 1
                d.tcp_payload_bytes += plen
                d.largest_tcp_payload = max(d.largest_tcp_payload, plen)
            if flags & _SYN:
                if doff > 20 and (mss := _syn_mss(data[l4 : l4 + doff])) is not None:
                    d.syn_mss.append(mss)
                st[0] = (seq + 1 + plen) & _M32
            elif plen:
                end = (seq + plen) & _M32
                if st[0] < 0:
                    st[0] = end
                    d.tcp_new_bytes += plen
                elif ((end - st[0] + _HALF) & _M32) - _HALF <= 0:
                    d.retransmissions += 1
                else:
                    if ((seq - st[0] + _HALF) & _M32) - _HALF > 0:
                        d.out_of_order += 1
                    d.tcp_new_bytes += min(plen, (end - st[0]) & _M32)
                    st[0] = end
            if win == 0 and not flags & _RST:
                d.zero_windows += 1
            if flags & _ACK:
                if not plen and not flags & (_SYN | _FIN | _RST) and win and st[1] == ack and st[2] == win:
                    d.dup_acks += 1
                st[1], st[2] = ack, win
        elif proto == 17 and len(data) >= l4 + 8:
            sport, dport, ulen = _UDP.unpack_from(data, l4)
            plen = ulen - 8 if ulen >= 8 else max(0, total - ihl - 8)
            d.udp_datagrams += 1
            d.udp_payload_bytes += plen
            d.largest_udp_payload = max(d.largest_udp_payload, plen)
            fkey = key + data[l4 : l4 + 4]
            if fkey not in self.flows:
                self.flows[fkey] = (UdpFlow(d.src, sport, d.dst, dport), [])
            flow, heads = self.flows[fkey]
            flow.datagrams += 1
            flow.payload_bytes += plen
            flow.times.append(ts)
            heads.append(data[l4 + 8 : l4 + 8 + _HEAD])

    def summary(self) -> WireSummary:
        """The summary of every record fed so far (a copy: feeding goes on unchanged)."""
        s = self.s
        out = WireSummary(s.path, s.packets, s.first_time, s.last_time, other_frames=s.other_frames)
        out.directions = {(d.src, d.dst): replace(d, syn_mss=list(d.syn_mss)) for d in self.dirs.values()}
        for flow, heads in self.flows.values():
            copy = replace(flow, times=list(flow.times), bursts=[], indexes=[])
            _sequence(copy, heads)
            out.udp_flows.append(copy)
        return out


def summarize_pcap(
    path: Path, start_packet: int = 0, stop_packet: int | None = None, *, start: PcapMark | None = None
) -> WireSummary:
    """Summarize records [start_packet, stop_packet) of a capture (counted from the file's first record);
    `start`, a mark of the file (`mark`), is where the slice begins instead, read from its offset.
    TCP state (highest seq+len, previous ACK and window) is per connection and direction, fresh at the slice."""
    summarizer = Summarizer(path)
    if start is not None:
        start_packet = start.records
    with closing(_records(path, start)) as records:
        for index, (data, ts, wirelen) in enumerate(records, start.records if start is not None else 0):
            if index < start_packet:
                continue
            if stop_packet is not None and index >= stop_packet:
                break
            summarizer.feed(data, ts, wirelen)
    return summarizer.summary()


def _decode(fmt: str, head: bytes) -> tuple[int, bool] | None:
    """(sequence number, is iperf 2's end marker) of one payload in `fmt`, None if not in the bytes."""
    if fmt == "iperf2":
        return (abs(v := _I32.unpack_from(head)[0]), v < 0) if len(head) >= 4 else None
    if fmt == "iperf3":
        return (_U32.unpack_from(head, 8)[0], False) if len(head) >= 12 else None
    if len(head) >= STREAM_HEADER.size and (h := STREAM_HEADER.unpack_from(head))[0] == STREAM_MAGIC:
        return h[4], False
    return None


def _detect(heads: list[bytes]) -> str | None:
    """The format whose sequence numbers go up by one most often in the first datagrams (the stream
    header's magic on most of them wins); None if none does so for at least half of them."""
    sample = heads[:_DETECT]
    if len(sample) < 3:
        return None
    if 2 * sum(_decode("stream", h) is not None for h in sample) > len(sample):
        return "stream"
    best, best_ones = None, 0
    for fmt in ("iperf2", "iperf3"):
        seqs = [_decode(fmt, h) for h in sample]
        ones = sum(1 for a, b in pairwise(seqs) if a is not None and b is not None and b[0] - a[0] == 1)
        if ones > best_ones and 2 * ones >= len(sample) - 1:
            best, best_ones = fmt, ones
    return best


def _sequence(flow: UdpFlow, heads: list[bytes]) -> None:
    """Fill the flow's sequence analysis (and, for the stream format, bursts and indexes)."""
    fmt = flow.seq_format = _detect(heads)
    if fmt is None:
        return
    seen: set[int] = set()
    markers: set[int] = set()  # iperf 2's end marker: neither a duplicate nor a reorder
    highest = -1
    for head in heads:
        if fmt == "stream":
            h = STREAM_HEADER.unpack_from(head) if len(head) >= STREAM_HEADER.size else None
            burst, index = (h[3], h[2]) if h is not None and h[0] == STREAM_MAGIC else (-1, -1)
            flow.bursts.append(burst)
            flow.indexes.append(index)
        if (dec := _decode(fmt, head)) is None:
            continue
        seq, marker = dec
        if marker:
            markers.add(seq)
        elif seq in seen:
            flow.duplicates += 1
        else:
            if seq < highest:
                flow.reordered += 1
            seen.add(seq)
            highest = max(highest, seq)
    flow.distinct = len(seen)
    numbers = seen | markers
    if numbers:
        flow.first_seq, flow.last_seq = min(numbers), max(numbers)
        flow.missing = flow.last_seq - flow.first_seq + 1 - len(numbers)


def gaps_us(times: list[float]) -> list[float]:
    """Consecutive differences of `times` (seconds) in microseconds."""
    return [(b - a) * 1e6 for a, b in pairwise(times)]
