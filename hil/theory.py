"""Theoretical goodput of a link, the yardstick every measurement is shown against.

On Ethernet every frame costs, besides its IP packet: preamble + SFD (8 bytes), MAC header (14),
FCS (4) and the inter-frame gap (12) = 38 bytes of wire time. The goodput of a transport is
payload / (payload + transport and IP headers + 38) of the line rate, e.g. TCP with MSS 1460 and
no options: 1460 / 1538 x 100 Mbit/s = 94.93 Mbit/s.
"""

from __future__ import annotations

ETHERNET_OVERHEAD = 8 + 14 + 4 + 12  # preamble+SFD, MAC header, FCS, inter-frame gap
IPV4_HEADER = 20
TCP_HEADER = 20
UDP_HEADER = 8
ETHERNET_MIN_PAYLOAD = 46  # shorter frames are padded


def _wire_bytes(ip_packet: int) -> int:
    return max(ip_packet, ETHERNET_MIN_PAYLOAD) + ETHERNET_OVERHEAD


def tcp_goodput_mbps(link_mbps: float, mss: int, tcp_options: int = 0) -> float:
    """Goodput of a saturated TCP stream of full segments (ACKs travel the other direction)."""
    if mss <= 0 or link_mbps <= 0:
        raise ValueError("link rate and MSS must be positive")
    payload = mss - tcp_options
    return link_mbps * payload / _wire_bytes(mss + IPV4_HEADER + TCP_HEADER)


def udp_goodput_mbps(link_mbps: float, payload: int) -> float:
    """Goodput of back-to-back UDP datagrams of `payload` bytes (no IP fragmentation)."""
    if payload <= 0 or link_mbps <= 0:
        raise ValueError("link rate and payload must be positive")
    return link_mbps * payload / _wire_bytes(payload + IPV4_HEADER + UDP_HEADER)


def udp_frame_bytes(payload: int) -> int:
    """The Ethernet frame (MAC header to FCS, RFC 2544's frame size) that carries a UDP datagram of
    `payload` bytes: 1448 -> 1494, 18 -> 64 (the minimum frame)."""
    if payload <= 0:
        raise ValueError("payload must be positive")
    return max(payload + UDP_HEADER + IPV4_HEADER, ETHERNET_MIN_PAYLOAD) + 14 + 4


def frame_rate_fps(link_mbps: float, frame_bytes: int) -> float:
    """The medium's theoretical frame rate for frames of `frame_bytes` (RFC 2544's frame size, MAC
    header to FCS) back to back: each also takes preamble + SFD (8 bytes) and the gap (12). On
    100BASE-TX: 148,810 frames/s at 64 bytes, 8,127 at 1518."""
    if frame_bytes < 64 or link_mbps <= 0:
        raise ValueError("frames are at least 64 bytes and the link rate positive")
    return link_mbps * 1e6 / (8 * (frame_bytes + 8 + 12))


def efficiency_pct(measured_mbps: float, theoretical_mbps: float) -> float:
    return 100.0 * measured_mbps / theoretical_mbps


def ack_wire_bits() -> int:
    """Wire time of a bare TCP ACK (IP + TCP headers, padded to the minimum frame), in bits."""
    return 8 * _wire_bytes(IPV4_HEADER + TCP_HEADER)


def window_limited_goodput_mbps(window_bytes: int, delay_ms: float, link_mbps: float, mss: int = 1460) -> float:
    """Goodput of a TCP stream whose receive window limits it, on a link with a one-way delay
    `delay_ms` added to a negligible round trip: `window_bytes` of payload per round trip, the
    round trip being the delay plus the wire time of one full segment and of its ACK (each segment
    is acknowledged when it arrives, the window is reopened at once). Never more than the link's
    saturated goodput."""
    if window_bytes <= 0 or delay_ms <= 0 or link_mbps <= 0 or mss <= 0:
        raise ValueError("window, delay, link rate and MSS must be positive")
    segment_bits = 8 * _wire_bytes(mss + IPV4_HEADER + TCP_HEADER)
    rtt_s = delay_ms / 1000.0 + (segment_bits + ack_wire_bits()) / (link_mbps * 1e6)
    return min(tcp_goodput_mbps(link_mbps, mss), window_bytes * 8 / rtt_s / 1e6)


def acked_per_round_trip(window_bytes: int, mss: int) -> int:
    """The bytes of one window a receiver that delays its ACKs (lwIP, RFC 1122: an ACK for every
    second full segment, a lone segment's held) acknowledges within the round trip: a window of an
    odd number of full segments has its last segment's ACK held until the next window's first
    segment arrives, so one segment fewer moves per round trip (11 x 1460 B: 10 segments, 90.9 %)."""
    if window_bytes <= 0 or mss <= 0:
        raise ValueError("window and MSS must be positive")
    segments = window_bytes // mss
    return (segments - 1) * mss if segments % 2 and segments > 1 else window_bytes
