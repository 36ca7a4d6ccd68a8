"""Counters on every hop of the bench, read before and after a measurement: the interfaces'
statistics (`ip -s -j link`), the shapers' queue disciplines (`tc -s -j qdisc`: tbf drops), the
kernels' protocol counters (`nstat`: Udp RcvbufErrors, TcpRetransSegs, ...), the injected loss's
drop counter (nftables) and the DUT's own (its console's `stats`). A counter that cannot be read
is left out, never an error: counters are evidence."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from hil.step_clock import timed

Counters = dict[str, dict[str, int]]  # hop -> counter -> value

# the kernel counters kept besides every one whose name says it counts a fault
NSTAT_KEPT = ("UdpInDatagrams", "UdpOutDatagrams", "TcpInSegs", "TcpOutSegs", "TcpRetransSegs", "IpInReceives",
              "IpOutRequests", "IcmpInEchos", "IcmpInEchoReps")  # fmt: skip
NSTAT_FAULT_WORDS = ("Err", "Drop", "Retrans", "Discard", "Lost", "Prune", "Overflow", "Fail", "NoPorts")
IFACE_KEPT = ("packets", "bytes", "dropped", "errors", "missed_errors", "over_errors", "fifo_errors")
TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Interface:
    """An interface of the bench and the argv prefix of its namespace."""

    hop: str  # what the ledger calls it: pc, peer, dut_port_pc, ...
    prefix: tuple[str, ...]
    name: str
    pause: bool = False  # a real NIC: its pause frames are read too (a DUT's flow control, hil.bench_faults)


def _json(argv: list[str]) -> object:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None


def link_counters(prefix: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Every interface of a namespace (one `ip` call): name -> rx_/tx_ packets, bytes, dropped,
    errors, missed and overruns."""
    found = _json([*prefix, "ip", "-s", "-s", "-j", "link", "show"])
    out: dict[str, dict[str, int]] = {}
    for link in found if isinstance(found, list) else []:
        if not isinstance(link, dict) or not isinstance(link.get("ifname"), str):
            continue
        stats = link.get("stats64") or link.get("stats") or {}
        values = {f"{way}_{key}": value for way in ("rx", "tx") for key in IFACE_KEPT
                  if isinstance(value := stats.get(way, {}).get(key), int)}  # fmt: skip
        out[link["ifname"]] = values
    return out


def root_qdisc_counters(prefix: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Every interface's root queue discipline in a namespace (one `tc` call): name -> drops,
    overlimits, packets sent, requeues (on the virtual benches the tbf shaper's: its drops are the
    shaper's loss; a real NIC's own qdisc drops as its queue)."""
    found = _json([*prefix, "tc", "-s", "-j", "qdisc", "show"])
    out: dict[str, dict[str, int]] = {}
    for q in found if isinstance(found, list) else []:
        if isinstance(q, dict) and q.get("root") and isinstance(q.get("dev"), str):
            out[q["dev"]] = {
                k: q[k] for k in ("drops", "overlimits", "packets", "requeues") if isinstance(q.get(k), int)
            }
    return out


def pause_counters(prefix: tuple[str, ...], iface: str) -> dict[str, int]:
    """A NIC's pause frames sent and received (`ethtool -I -a`: its standard flow-control
    statistics); {} where the driver or ethtool does not report them (a veth never pauses)."""
    try:
        out = subprocess.run([*prefix, "ethtool", "-I", "-a", iface], capture_output=True, text=True,
                             timeout=TIMEOUT_S, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return {}
    found: dict[str, int] = {}
    for line in out.stdout.splitlines():
        key, _, value = line.strip().partition(":")
        if key in ("rx_pause_frames", "tx_pause_frames") and value.strip().isdigit():
            found[key] = int(value)
    return found if out.returncode == 0 else {}


def kernel_counters(prefix: tuple[str, ...]) -> dict[str, int]:
    """The namespace's protocol counters (nstat, absolute, its history file untouched)."""
    found = _json([*prefix, "nstat", "-asz", "-j"])
    kernel = found.get("kernel") if isinstance(found, dict) else None
    if not isinstance(kernel, dict):
        return {}
    return {k: int(v) for k, v in kernel.items()
            if isinstance(v, int) and (k in NSTAT_KEPT or any(w in k for w in NSTAT_FAULT_WORDS))}  # fmt: skip


@dataclass
class Hops:
    """What to read on a bench: its interfaces (with their root qdiscs), the namespaces whose
    kernel counters count (the PC's, the peer's), the injected loss's counter, the DUT's console."""

    interfaces: tuple[Interface, ...]
    kernels: tuple[tuple[str, tuple[str, ...]], ...]  # (hop, namespace prefix)
    link_loss: Callable[[], int | None] | None = None
    dut: Callable[[bool], dict[str, int] | None] | None = None

    def read(self, mark: bool = False) -> Counters:
        """Every hop's counters now (one `ip` and one `tc` call per namespace); `mark`: the DUT's
        high-water marks restart after its reading (the reading before a measurement)."""
        out: Counters = {}
        namespaces = {iface.prefix for iface in self.interfaces}
        with timed("counters: ip, tc, nstat"):
            # every command at once (each its own process, `ip netns exec` for a namespace: about
            # 7 ms each, six to eight of them a reading, read one after the other before)
            with ThreadPoolExecutor(max_workers=8) as pool:
                links = {prefix: pool.submit(link_counters, prefix) for prefix in namespaces}
                qdiscs = {prefix: pool.submit(root_qdisc_counters, prefix) for prefix in namespaces}
                pauses = {iface: pool.submit(pause_counters, iface.prefix, iface.name)
                          for iface in self.interfaces if iface.pause}  # fmt: skip
                kernels = [(hop, pool.submit(kernel_counters, prefix)) for hop, prefix in self.kernels]
                loss = pool.submit(self.link_loss) if self.link_loss is not None else None
            for iface in self.interfaces:
                if found := links[iface.prefix].result().get(iface.name):
                    out[iface.hop] = found
                if found := qdiscs[iface.prefix].result().get(iface.name):
                    out[f"{iface.hop}_qdisc"] = found
                if iface in pauses and (found := pauses[iface].result()):
                    out[f"{iface.hop}_pause"] = found
            for hop, reading in kernels:
                if found := reading.result():
                    out[f"{hop}_kernel"] = found
            if loss is not None and (dropped := loss.result()) is not None:
                out["link_loss"] = {"dropped": dropped}
        if self.dut is not None:
            try:
                with timed("counters: the DUT's stats"):
                    found_dut = self.dut(mark)
            except Exception:  # a console that cannot say: no DUT counters for this window
                found_dut = None
            if found_dut:
                out["dut"] = found_dut
        return out


def delta(before: Counters, after: Counters) -> Counters:
    """What changed between two readings (hops and counters read both times); a counter that went
    down (a DUT's `stats` reset, a re-flashed DUT) gives its value after."""
    out: Counters = {}
    for hop, values in after.items():
        old = before.get(hop)
        if old is None:
            continue
        changed = {k: (v - old[k] if v >= old[k] else v) for k, v in values.items() if k in old and v != old[k]}
        if changed:
            out[hop] = changed
    return out
