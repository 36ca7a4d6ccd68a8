"""hil/wire/pcap_summary.py on pcaps written here as tcpdump -s 128 writes them (headers only, original lengths)."""

import re
import struct
import time
from pathlib import Path

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether

from hil.traffic.stream_peer import HEADER, MAGIC
from hil.wire.pcap_summary import count_records, gaps_us, mark, summarize_pcap

pytestmark = pytest.mark.selftest

PC, DUT, MGMT = "10.0.0.1", "10.0.0.2", "10.0.0.9"
ETH = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
Record = tuple[int, bytes]  # capture time in us, the whole frame


def write_pcap(path: Path, records: list[Record], *, nano: bool = False, snaplen: int = 128) -> Path:
    """A classic pcap as tcpdump writes it: each frame cut at `snaplen`, its original length kept."""
    out = [struct.pack("<IHHiIII", 0xA1B23C4D if nano else 0xA1B2C3D4, 2, 4, 0, 0, snaplen, 1)]
    for t_us, frame in records:
        cap = frame[:snaplen]
        frac = t_us % 1_000_000 * (1000 if nano else 1)
        out.append(struct.pack("<IIII", t_us // 1_000_000, frac, len(cap), len(frame)) + cap)
    path.write_bytes(b"".join(out))
    return path


def tcp(src, dst, seq, flags="A", ack=0, win=1000, payload=0, mss=None):
    sport, dport = (40000, 5201) if src == PC else (5201, 40000)
    options = [("MSS", mss)] if mss else []
    seg = TCP(sport=sport, dport=dport, seq=seq, ack=ack, flags=flags, window=win, options=options)
    return bytes(ETH / IP(src=src, dst=dst) / seg / (b"x" * payload))


def udp(src, dst, sport, dport, payload: bytes, size: int) -> bytes:
    return bytes(ETH / IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / payload.ljust(size, b"\0"))


def tcp_transfer() -> list[bytes]:
    """PC -> DUT bulk with a hole, a retransmission, three dup ACKs, a zero window, data back, a RST."""
    return [
        tcp(PC, DUT, 1000, "S", win=64240, mss=1460),
        tcp(DUT, PC, 5000, "SA", ack=1001, mss=536),
        tcp(PC, DUT, 1001, ack=5001, win=502),
        tcp(PC, DUT, 1001, "PA", ack=5001, win=502, payload=1448),
        tcp(PC, DUT, 2449, "PA", ack=5001, win=502, payload=1448),  # highest seq+len 3897
        tcp(DUT, PC, 5001, ack=2449),
        tcp(PC, DUT, 5345, "PA", ack=5001, win=502, payload=1448),  # 3897..5345 never seen: out of order
        tcp(DUT, PC, 5001, ack=3897),
        tcp(DUT, PC, 5001, ack=3897),  # dup ACK 1
        tcp(DUT, PC, 5001, ack=3897),  # dup ACK 2
        tcp(DUT, PC, 5001, ack=3897),  # dup ACK 3
        tcp(PC, DUT, 2449, "PA", ack=5001, win=502, payload=1448),  # retransmission
        tcp(DUT, PC, 5001, ack=3897, win=0),  # zero window (a window change: no dup ACK)
        tcp(DUT, PC, 5001, "PA", ack=3897, payload=200),
        tcp(DUT, PC, 5201, "PA", ack=3897, payload=100),
        tcp(PC, DUT, 6793, "R", win=0),  # a RST's window 0 is no zero window
    ]


def iperf2_ids() -> list[int]:
    ids = [i for i in range(1, 100) if i not in (10, 20, 30)]  # 3 missing
    ids.insert(ids.index(40), 40)  # 1 duplicate
    i = ids.index(51)
    ids[i], ids[i + 1] = 52, 51  # 1 reordered
    return [*ids, -100, -100, -100]  # iperf 2's end marker, repeated until the server reports


def udp_flows() -> list[Record]:
    """An iperf 2 flow PC -> DUT (and the server's report back), an iperf 3 flow, a stream-peer flow back."""
    records: list[Record] = []
    t = 2_000_000
    for n, i in enumerate(iperf2_ids()):
        records.append((t + 100 * n, udp(PC, DUT, 50000, 5001, struct.pack("!iII", i, 1700000000, 100 * n), 1470)))
    records.append((t + 20_000, udp(DUT, PC, 5001, 50000, struct.pack("!iII", -100, 0, 0), 128)))
    t = 3_000_000
    for count in (c for c in range(1, 51) if c != 25):
        payload = struct.pack("!III", 1700000000, count, count)  # sec, usec, packet count
        records.append((t + 1000 * count, udp(PC, DUT, 50001, 5201, payload, 1448)))
    t = 4_000_000
    for burst in range(5):
        for index in range(4):
            header = HEADER.pack(MAGIC, 1, index, burst, 4 * burst + index, 0)
            records.append((t + 10_000 * burst + 100 * index, udp(DUT, PC, 6001, 6001, header, 200)))
    return records


def other_frames() -> list[Record]:
    t = 5_000_000
    arp = bytes(Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff") / ARP(psrc=PC, pdst=DUT))
    ipv6 = bytes(ETH / IPv6(src="fe80::1", dst="fe80::2") / UDP(sport=1, dport=2))
    vlan_ip = IP(src="192.168.10.1", dst="192.168.10.2") / UDP(sport=7, dport=9) / (b"v" * 300)
    vlan = bytes(ETH / Dot1Q(vlan=10) / vlan_ip)
    mgmt = bytes(ETH / IP(src=MGMT, dst=PC) / TCP(sport=22, dport=50022, flags="PA") / (b"s" * 40))
    return [(t, arp), (t + 1, arp), (t + 2, ipv6), (t + 3, vlan), (t + 4, mgmt), (t + 5, mgmt)]


@pytest.fixture
def session(tmp_path) -> Path:
    records = [(1_000_000 + 100 * n, f) for n, f in enumerate(tcp_transfer())]
    return write_pcap(tmp_path / "session.pcap", records + udp_flows() + other_frames())


def test_tcp_counters_per_direction(session):
    s = summarize_pcap(session)
    frames = tcp_transfer()
    up, down = s.direction(PC, DUT), s.direction(DUT, PC)
    assert (up.tcp_segments, up.tcp_payload_segments, up.tcp_payload_bytes) == (7, 4, 4 * 1448)
    assert up.tcp_new_bytes == 3 * 1448  # one of the four segments resent: its bytes counted once
    assert (up.retransmissions, up.out_of_order, up.dup_acks, up.zero_windows) == (1, 1, 0, 0)
    assert (up.syn_mss, up.largest_tcp_payload) == ([1460], 1448)
    assert (down.tcp_segments, down.tcp_payload_segments, down.tcp_payload_bytes) == (9, 2, 300)
    assert (down.retransmissions, down.out_of_order, down.dup_acks, down.zero_windows) == (0, 0, 3, 1)
    assert (down.syn_mss, down.largest_tcp_payload) == ([536], 200)
    tcp_up = sum(len(f) - 14 for f in frames if IP(f[14:]).src == PC)
    assert up.ip_bytes == tcp_up + 100 * (1470 + 28) + 49 * (1448 + 28)  # the IP total lengths, not what was captured
    assert up.packets == 7 + 100 + 49 and down.packets == 9 + 1 + 20
    assert s.packets == len(frames) + 100 + 1 + 49 + 20 + 6
    assert (s.first_time, s.last_time) == (1.0, 5.000005)


def test_sequence_wraparound_is_no_retransmission(tmp_path):
    top = 2**32
    frames = [
        tcp(PC, DUT, top - 1001, "S", mss=1460),
        tcp(PC, DUT, top - 1000, "PA", payload=1000),  # ends at 0: wrapped
        tcp(PC, DUT, 0, "PA", payload=1000),
        tcp(PC, DUT, 1000, "PA", payload=1000),
        tcp(PC, DUT, top - 1000, "PA", payload=1000),  # the one retransmission
    ]
    s = summarize_pcap(write_pcap(tmp_path / "wrap.pcap", [(n, f) for n, f in enumerate(frames)]))
    d = s.direction(PC, DUT)
    assert (d.tcp_payload_segments, d.retransmissions, d.out_of_order) == (4, 1, 0)


def test_udp_flows_and_their_sequence_numbers(session):
    s = summarize_pcap(session)
    flows = {(f.src, f.sport, f.dst, f.dport): f for f in s.udp_flows}
    iperf2 = flows[PC, 50000, DUT, 5001]
    assert (iperf2.seq_format, iperf2.first_seq, iperf2.last_seq, iperf2.datagrams) == ("iperf2", 1, 100, 100)
    assert (iperf2.missing, iperf2.duplicates, iperf2.reordered) == (3, 1, 1)
    assert iperf2.payload_bytes == 100 * 1470 and len(iperf2.times) == 100 and not iperf2.bursts
    assert flows[DUT, 5001, PC, 50000].seq_format is None  # the server's report: one datagram
    iperf3 = flows[PC, 50001, DUT, 5201]
    assert (iperf3.seq_format, iperf3.first_seq, iperf3.last_seq, iperf3.missing) == ("iperf3", 1, 50, 1)
    assert (iperf3.duplicates, iperf3.reordered) == (0, 0)
    stream = flows[DUT, 6001, PC, 6001]
    assert (stream.seq_format, stream.first_seq, stream.last_seq, stream.missing) == ("stream", 0, 19, 0)
    assert stream.bursts == [b for b in range(5) for _ in range(4)]
    assert stream.indexes == list(range(4)) * 5
    assert gaps_us(stream.times) == pytest.approx(([100.0] * 3 + [9700.0]) * 4 + [100.0] * 3, abs=1e-3)
    up, down = s.direction(PC, DUT), s.direction(DUT, PC)
    assert (up.udp_datagrams, up.largest_udp_payload, up.udp_payload_bytes) == (149, 1470, 100 * 1470 + 49 * 1448)
    assert (down.udp_datagrams, down.largest_udp_payload) == (21, 200)


def test_non_ipv4_frames_and_a_vlan_tag(session):
    s = summarize_pcap(session)
    assert s.other_frames == 3  # two ARP, one IPv6
    vlan = s.direction("192.168.10.1", "192.168.10.2")
    assert (vlan.packets, vlan.ip_bytes, vlan.udp_datagrams, vlan.largest_udp_payload) == (1, 328, 1, 300)
    assert s.direction("1.2.3.4", "5.6.7.8").packets == 0


def test_a_slice_counts_only_its_records_with_fresh_tcp_state(session):
    s = summarize_pcap(session, 0, 3)
    assert s.packets == 3 and s.direction(PC, DUT).packets == 2 and s.direction(DUT, PC).packets == 1
    assert (s.first_time, s.last_time) == (1.0, 1.0002)
    late = summarize_pcap(session, 11, 12)  # only the retransmission: the first payload seen on its connection
    d = late.direction(PC, DUT)
    assert late.packets == 1 and (d.tcp_payload_segments, d.retransmissions) == (1, 0)
    assert summarize_pcap(session, 10_000).packets == 0


def test_a_mark_counts_on_from_an_earlier_one_and_a_slice_is_read_from_it(tmp_path, session):
    whole = session.read_bytes()
    growing = tmp_path / "growing.pcap"
    growing.write_bytes(whole[: len(whole) // 2])  # a capture still being written
    early = mark(growing)
    growing.write_bytes(whole)
    later, fresh = mark(growing, since=early), mark(growing)
    assert later == fresh and later.records == count_records(session) and early.records < later.records
    by_index = summarize_pcap(session, early.records, later.records)
    by_mark = summarize_pcap(session, stop_packet=later.records, start=early)
    assert by_mark.packets == by_index.packets == later.records - early.records
    assert by_mark.as_fields(PC, DUT) == by_index.as_fields(PC, DUT)
    assert by_mark.text(PC, DUT) == by_index.text(PC, DUT)


def test_a_truncated_file_stops_at_its_last_complete_record(tmp_path, session):
    whole = session.read_bytes()
    n = count_records(session)
    assert n == 16 + 100 + 1 + 49 + 20 + 6
    last = 16 + min(128, len(other_frames()[-1][1]))  # the last record: its header and captured bytes
    for cut, expected in ((last // 2, n - 1), (last - 8, n - 1), (last + 8, n - 2)):  # data, header, one before
        path = tmp_path / f"cut{cut}.pcap"
        path.write_bytes(whole[:-cut])
        assert count_records(path) == expected
        assert summarize_pcap(path).packets == expected


def test_not_a_pcap_names_the_file(tmp_path):
    for name, content in (("notes.txt", b"this is not a capture\n" * 3), ("empty.pcap", b"")):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ValueError, match=re.escape(str(path))):
            summarize_pcap(path)
        with pytest.raises(ValueError, match=re.escape(str(path))):
            count_records(path)


def test_nanosecond_timestamps(tmp_path):
    records = [(1_500_000, tcp(PC, DUT, 1, payload=10)), (1_500_250, tcp(PC, DUT, 11, payload=10))]
    s = summarize_pcap(write_pcap(tmp_path / "ns.pcap", records, nano=True))
    assert s.first_time == 1.5 and s.last_time == pytest.approx(1.50025, abs=1e-9)


def test_as_fields(session):
    s = summarize_pcap(session)
    f = s.as_fields(PC, DUT)
    assert f["near->far"] == {
        "packets": 156,
        "ip_bytes": s.direction(PC, DUT).ip_bytes,
        "tcp_payload_bytes": 5792,
        "tcp_new_bytes": 4344,  # the resent segment's bytes once
        "retransmissions": 1,
        "out_of_order": 1,
        "syn_mss": [1460],
        "largest_tcp_payload": 1448,
        "udp_datagrams": 149,
        "largest_udp_payload": 1470,
    }
    back = f["far->near"]
    assert isinstance(back, dict) and (back["dup_acks"], back["zero_windows"], back["syn_mss"]) == (3, 1, [536])
    assert "retransmissions" not in back  # zero counters left out
    assert f["udp_flows"] == [
        {"flow": "10.0.0.1:50000->10.0.0.2:5001", "format": "iperf2", "datagrams": 100, "missing": 3,
         "duplicates": 1, "reordered": 1},
        {"flow": "10.0.0.1:50001->10.0.0.2:5201", "format": "iperf3", "datagrams": 49, "missing": 1,
         "duplicates": 0, "reordered": 0},
        {"flow": "10.0.0.2:6001->10.0.0.1:6001", "format": "stream", "datagrams": 20, "missing": 0,
         "duplicates": 0, "reordered": 0},
    ]  # fmt: skip
    assert "times" not in str(f)


def test_text(session):
    s = summarize_pcap(session)
    s.truncated_at_cap = True
    text = s.text(PC, DUT, near_name="PC", far_name="DUT")
    print(text)
    lines = text.splitlines()
    assert lines[0] == (
        "capture session.pcap: 192 packets in 4.000 s (stopped at its packet cap: later packets not captured)"
    )
    assert "PC 10.0.0.1 -> DUT 10.0.0.2" in lines and "DUT 10.0.0.2 -> PC 10.0.0.1" in lines
    up = lines[lines.index("PC 10.0.0.1 -> DUT 10.0.0.2") + 1 : lines.index("DUT 10.0.0.2 -> PC 10.0.0.1")]
    assert len(up) == 15 and len({len(line) for line in up}) == 1  # every counter, aligned
    assert re.search(r"^  retransmissions +1$", "\n".join(up), re.M)
    assert re.search(r"^  SYN MSS +1460$", "\n".join(up), re.M)
    assert re.search(r"^  dup ACKs +3$", text.split("DUT 10.0.0.2 -> PC")[1], re.M)
    assert "iperf2 seq 1..100: missing 3, duplicates 1, reordered 1" in text
    assert "10.0.0.2:5001->10.0.0.1:50000" in text and "not numbered" in text
    assert lines[-1] == (
        "other traffic (packets): 10.0.0.9 -> 10.0.0.1 2; 192.168.10.1 -> 192.168.10.2 1; non-IPv4 frames 3"
    )
    assert all(line == line.rstrip() for line in lines)
    assert text == s.text(PC, DUT, near_name="PC", far_name="DUT")
    assert summarize_pcap(session).text(PC, DUT).splitlines()[0].endswith("(complete)")
    assert "far end 10.0.0.2 -> PC 10.0.0.1" in summarize_pcap(session).text(PC, DUT)


def test_gaps():
    assert gaps_us([1.0, 1.000100, 1.000350]) == pytest.approx([100.0, 250.0])
    assert gaps_us([1.0]) == []


def test_speed_of_30000_packets(tmp_path):
    """Templates patched in place (scapy builds ~10,000 frames a second): data, ACKs and UDP interleaved."""
    data = bytearray(tcp(PC, DUT, 0, "PA", payload=1448))
    ack = bytearray(tcp(DUT, PC, 0))
    dgram = bytearray(udp(PC, DUT, 50000, 5001, b"", 1470))
    records: list[Record] = []
    seq = 1
    for n in range(10_000):
        struct.pack_into("!I", data, 38, seq)
        records.append((3 * n, bytes(data)))
        seq += 1448
        struct.pack_into("!I", ack, 42, seq)
        records.append((3 * n + 1, bytes(ack)))
        struct.pack_into("!i", dgram, 42, n + 1)
        records.append((3 * n + 2, bytes(dgram)))
    path = write_pcap(tmp_path / "big.pcap", records)
    start = time.perf_counter()
    s = summarize_pcap(path)
    elapsed = time.perf_counter() - start
    print(f"summarize_pcap: {len(records)} packets in {elapsed:.3f} s ({elapsed / len(records) * 1e6:.1f} us a packet)")
    assert s.packets == 30_000 and s.direction(PC, DUT).tcp_payload_segments == 10_000
    assert s.direction(PC, DUT).retransmissions == 0 and s.direction(DUT, PC).dup_acks == 0
    assert s.udp_flows[0].seq_format == "iperf2" and s.udp_flows[0].missing == 0
    assert elapsed < 10
