"""The virtual station's radio model (firmware/host/src/wifi_air.h), computed again here so that the
signal sweep on the virtual bench has answers known before it runs: RSSI from attenuation, the
MCS rate control takes at that RSSI, each attempt's frame error rate, the air time of a frame
with its retries, and from those the goodput a saturated air carries per direction and protocol.

802.11n, 2.4 GHz, HT20, one spatial stream, long guard interval, no aggregation; the receiver
sensitivities are IEEE 802.11-2020 table 19-23's (10 % frame error at the sensitivity). Both
directions share one air: a TCP stream's ACKs take air from its data. The constants are the
firmware's; tests/selftest/test_radio_model.py reads them from its header so the two cannot drift.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

AP_DBM_DEFAULT = 20.0
FIXED_LOSS_DB = 60.0
NOISE_DBM = -95
ASSOC_MARGIN_DB = 1
RETRY_LIMIT = 7
SLOT_NS = 9000
SIFS_NS = 10000
DIFS_NS = SIFS_NS + 2 * SLOT_NS
CW_MIN = 15
CW_MAX = 1023
PREAMBLE_NS = 36000
SYMBOL_NS = 4000
ACK_NS = 28000
MAC_EXTRA_BYTES = 24

# (data bits per OFDM symbol, PHY rate in kbit/s, sensitivity in dBm) per MCS 0..7
MCS_TABLE: tuple[tuple[int, int, int], ...] = (
    (26, 6500, -82), (52, 13000, -79), (78, 19500, -77), (104, 26000, -74),
    (156, 39000, -70), (208, 52000, -66), (234, 58500, -65), (260, 65000, -64),
)  # fmt: skip

ETH_IPV4_UDP = 14 + 20 + 8  # the Ethernet frame around a UDP payload
ETH_IPV4_TCP = 14 + 20 + 20  # ... around a TCP segment without options (lwIP's, and Linux's to it)
TCP_ACK_FRAME = ETH_IPV4_TCP  # a bare ACK


def _round_half_away(x: float) -> int:
    """C's lround."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def rssi_for(atten_db: float, ap_dbm: float = AP_DBM_DEFAULT) -> int:
    return _round_half_away(ap_dbm - FIXED_LOSS_DB - atten_db)


def mcs_for(rssi_dbm: int) -> int:
    return max((i for i, (_, _, sens) in enumerate(MCS_TABLE) if rssi_dbm >= sens), default=0)


def per(rssi_dbm: int, mcs: int) -> float:
    """One attempt's failure probability (the firmware rounds it to parts per million)."""
    p = 0.1 * 10 ** (-(rssi_dbm - MCS_TABLE[mcs][2]) / 2.0)
    return 1.0 if p >= 1.0 else _round_half_away(p * 1e6) / 1e6


def alive(rssi_dbm: int) -> bool:
    """The station keeps (and gets) its association at this RSSI."""
    return rssi_dbm >= MCS_TABLE[0][2] - ASSOC_MARGIN_DB


def attempt_ns(eth_len: int, mcs: int, attempt: int) -> int:
    """The air one attempt of an Ethernet frame of `eth_len` bytes occupies (0: the first)."""
    cw = min((CW_MIN + 1) << min(attempt, 6), CW_MAX + 1) - 1
    bits = 16 + 6 + 8 * (eth_len + MAC_EXTRA_BYTES)
    symbols = -(-bits // MCS_TABLE[mcs][0])
    return DIFS_NS + cw * SLOT_NS // 2 + PREAMBLE_NS + symbols * SYMBOL_NS + SIFS_NS + ACK_NS


@dataclass(frozen=True)
class FrameCost:
    """A frame's expected air (its attempts) and the chance it gets through."""

    air_ns: float
    delivered: float


def frame_cost(eth_len: int, rssi_dbm: int, halved: bool = False) -> FrameCost:
    mcs = mcs_for(rssi_dbm)
    p = per(rssi_dbm, mcs) if alive(rssi_dbm) else 1.0
    air = sum(p**k * attempt_ns(eth_len, mcs, k) for k in range(RETRY_LIMIT))
    return FrameCost(air * (2 if halved else 1), 1 - p**RETRY_LIMIT)


@dataclass(frozen=True)
class Step:
    """What the model says of one attenuation step."""

    atten_db: float
    rssi_dbm: int
    mcs: int
    phy_mbps: float
    per_pct: float
    alive: bool


def step(atten_db: float, ap_dbm: float = AP_DBM_DEFAULT) -> Step:
    rssi = rssi_for(atten_db, ap_dbm)
    mcs = mcs_for(rssi)
    return Step(atten_db, rssi, mcs, MCS_TABLE[mcs][1] / 1000, round(per(rssi, mcs) * 100, 4), alive(rssi))


def udp_goodput_mbps(payload: int, rssi_dbm: int, halved: bool = False) -> float:
    """A saturated air carrying datagrams of `payload` bytes one way: payload bits delivered per
    second of air."""
    if not alive(rssi_dbm):
        return 0.0
    c = frame_cost(payload + ETH_IPV4_UDP, rssi_dbm, halved)
    return payload * 8 * c.delivered / c.air_ns * 1000


def tcp_goodput_mbps(mss: int, rssi_dbm: int, acks_per_segment: float, halved: bool = False) -> float:
    """A saturated air carrying full segments of `mss` one way and the receiver's ACKs the other
    (`acks_per_segment` of them: the receiver's own habit, counted on the wire)."""
    if not alive(rssi_dbm):
        return 0.0
    data = frame_cost(mss + ETH_IPV4_TCP, rssi_dbm, halved)
    ack = frame_cost(TCP_ACK_FRAME, rssi_dbm, halved)
    return mss * 8 / (data.air_ns + acks_per_segment * ack.air_ns) * 1000


def fall_to_zero_db(ap_dbm: float = AP_DBM_DEFAULT, step_db: float = 1.0, max_db: float = 200.0) -> float:
    """The least attenuation (on a grid of `step_db` from 0) at which the station loses the AP."""
    n = 0
    while n * step_db <= max_db:
        if not alive(rssi_for(n * step_db, ap_dbm)):
            return n * step_db
        n += 1
    return math.inf
