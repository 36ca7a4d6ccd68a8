"""The DUT's side of a measurement, from its own counters read before and after it (hil-fw
`stats`, the first reading restarting its high-water marks): the share of its CPU that was busy,
the TCP segments it sent again and received out of sequence, and the fewest free entries its
data-path pools and heap had. A DUT whose console does not report a figure leaves it out, and the
record says which are missing."""

from __future__ import annotations

from dataclasses import dataclass

# lwIP's pools a measurement's data passes through (memp_std.h names): receive buffers, TCP
# segments queued to send or out of order, PBUF_REF/ROM headers of zero-copy sends
DATA_POOLS = ("PBUF_POOL", "TCP_SEG", "PBUF")
WHAT = {
    "dut_cpu_pct": "CPU load",
    "dut_tcp_retrans": "TCP segments sent again",
    "dut_tcp_ooseq": "TCP segments received out of sequence",
    "pool_free": "pool low-water marks",
    "heap_free": "heap low-water mark",
}


@dataclass(frozen=True)
class DutSide:
    # dut_cpu_pct, dut_tcp_retrans, dut_tcp_ooseq, dut_tcp_rx_dup, dut_tcp_segs_sent, dut_tcp_segs_received,
    # pool_free, heap_free
    metrics: dict[str, float]
    pools: dict[str, dict[str, int]]  # every pool: size, most used and least free during the measurement
    lowest_pool: str | None  # the data-path pool `pool_free` comes from
    missing: tuple[str, ...]  # what the DUT's console did not report (WHAT's words)

    def as_fields(self) -> dict[str, object]:
        out: dict[str, object] = {"metrics": self.metrics, "pools": self.pools}
        if self.lowest_pool:
            out["lowest_pool"] = self.lowest_pool
        if self.missing:
            out["missing"] = list(self.missing)
        return out

    def headline(self) -> str:
        """One line for a case's page: what the DUT's side was."""
        m = self.metrics
        parts = []
        if "dut_cpu_pct" in m:
            parts.append(f"DUT CPU {m['dut_cpu_pct']:.1f} %")
        if "dut_tcp_retrans" in m:
            parts.append(f"{m['dut_tcp_retrans']:.0f} TCP segments resent")
        if "dut_tcp_ooseq" in m:
            parts.append(f"{m['dut_tcp_ooseq']:.0f} received out of sequence")
        if "pool_free" in m:
            parts.append(f"fewest free {self.lowest_pool} {m['pool_free']:.0f}")
        if "heap_free" in m:
            parts.append(f"heap low-water {m['heap_free']:.0f} B free")
        if self.missing:
            parts.append(f"not reported: {', '.join(self.missing)}")
        return "; ".join(parts)

    def text(self) -> str:
        lines = [self.headline(), ""]
        if self.pools:
            lines.append(f"{'pool':<18s} {'size':>6s} {'most used':>10s} {'least free':>11s}")
            for name, p in self.pools.items():
                mark = "  <- pool_free" if name == self.lowest_pool else ""
                lines.append(f"{name:<18s} {p['size']:6d} {p['most_used']:10d} {p['least_free']:11d}{mark}")
        return "\n".join(lines) + "\n"


def _delta(before: dict[str, int], after: dict[str, int], key: str) -> int | None:
    """A counter's change over the measurement (None without both readings: a since-boot value is
    not the measurement's); one that went down was reset in between and counts from its reset."""
    if key not in after or key not in before:
        return None
    return after[key] - before[key] if after[key] >= before[key] else after[key]


def dut_side(before: dict[str, int], after: dict[str, int], traffic_s: float = 0.0, tcp: bool = True) -> DutSide:
    """The DUT's side from its readings before and after a measurement (empty: it has none). The
    CPU's busy time is taken over the measurement's traffic time (`traffic_s`, when shorter than
    the readings' interval: the console commands and waits between repetitions are not load);
    `tcp`: the DUT's own TCP segments belong to the measured flows (not for a DUT in the path)."""
    metrics: dict[str, float] = {}
    busy, uptime = _delta(before, after, "cpu_busy_us"), _delta(before, after, "uptime_us")
    if busy is not None and uptime:
        span = min(uptime, traffic_s * 1e6) if traffic_s > 0 else uptime
        metrics["dut_cpu_pct"] = round(min(100.0, 100.0 * busy / span), 2)
    for key, name in (("tcp_retrans", "dut_tcp_retrans"), ("tcp_ooseq", "dut_tcp_ooseq"),
                      ("tcp_rx_dup", "dut_tcp_rx_dup"), ("tcp_tx_segs", "dut_tcp_segs_sent"),
                      ("tcp_rx_segs", "dut_tcp_segs_received")):  # fmt: skip
        if tcp and (n := _delta(before, after, key)) is not None:
            metrics[name] = float(n)
    pools: dict[str, dict[str, int]] = {}
    for key, size in after.items():
        if key.startswith("pool_") and key.endswith("_avail") and size > 0:
            name = key.removeprefix("pool_").removesuffix("_avail")
            used = after.get(f"pool_{name}_max", 0)
            pools[name] = {"size": size, "most_used": used, "least_free": max(0, size - used)}
    data = {n: p["least_free"] for n, p in pools.items() if n in DATA_POOLS}
    lowest = min(data, key=lambda n: data[n]) if data else None
    if lowest is not None:
        metrics["pool_free"] = float(data[lowest])
    if "heap_avail" in after and "heap_max" in after:
        metrics["heap_free"] = float(max(0, after["heap_avail"] - after["heap_max"]))
    missing = tuple(what for key, what in WHAT.items() if key not in metrics and (tcp or "dut_tcp" not in key))
    return DutSide(metrics, pools, lowest, missing)
