"""Small parsers shared by scenarios."""

from __future__ import annotations

_SCALE = {"k": 1000, "m": 1000**2, "g": 1000**3, "K": 1024, "M": 1024**2, "G": 1024**3}


def parse_iperf_size(text: str) -> int:
    """iperf's sizes: lowercase k/m/g are powers of 10^3, uppercase K/M/G of 2^10."""
    if text and text[-1] in _SCALE:
        return int(text[:-1]) * _SCALE[text[-1]]
    return int(text)
