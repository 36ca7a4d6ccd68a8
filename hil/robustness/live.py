"""A live connection as the wire shows it: the ports and the next sequence numbers of a test in
progress between the PC and the DUT, read from a short capture on the PC's interface, so that
hostile frames can target that connection (in and out of its window) as an attacker on the
link would.

The capture is a few packets of tcpdump with a filter, in the PC's namespace, at most
CAPTURE_S long; its file is removed. Nothing seen (no test in progress, no tcpdump): None, and
the classes send their frames to the service's port without a live connection's numbers.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import RawPcapReader

from hil.plumbing.proc import die_with_parent

CAPTURE_S = 1.5
PACKETS = 12


@dataclass(frozen=True)
class Live:
    """A connection or UDP flow between the PC and the DUT, as last seen on the wire."""

    proto: str  # "tcp" or "udp"
    pc_port: int
    dut_port: int
    pc_next_seq: int | None = None  # TCP: the next byte the PC sends (its last segment's end)
    dut_next_seq: int | None = None  # TCP: the next byte the DUT sends (the PC's last ACK)
    dut_window: int | None = None  # TCP: the window the DUT last advertised (unscaled)
    pc_window: int | None = None  # TCP: the window the PC last advertised (unscaled)


def parse_live(frames: list[bytes], pc_ip: str, dut_ip: str, proto: str) -> Live | None:
    """The flow's ports and next sequence numbers from captured Ethernet frames (the last ones count)."""
    pc_port = dut_port = None
    pc_seq = dut_seq = dut_win = pc_win = None
    for data in frames:
        pkt = Ether(data)
        if IP not in pkt:
            continue
        ip = pkt[IP]
        layer = TCP if proto == "tcp" else UDP
        if layer not in pkt:
            continue
        seg = pkt[layer]
        from_pc = ip.src == pc_ip and ip.dst == dut_ip
        from_dut = ip.src == dut_ip and ip.dst == pc_ip
        if not (from_pc or from_dut):
            continue
        if from_pc:
            pc_port, dut_port = int(seg.sport), int(seg.dport)
        else:
            dut_port, pc_port = int(seg.sport), int(seg.dport)
        if proto != "tcp":
            continue
        payload = max(0, int(ip.len) - int(ip.ihl) * 4 - int(seg.dataofs) * 4)
        syn_fin = 1 if ("S" in seg.flags or "F" in seg.flags) else 0
        if from_pc:
            pc_seq = (int(seg.seq) + payload + syn_fin) % 2**32
            pc_win = int(seg.window)
            if "A" in seg.flags:
                dut_seq = int(seg.ack)  # what the PC has received of the DUT's
        else:
            dut_win = int(seg.window)
            if "A" in seg.flags:
                pc_seq = int(seg.ack)  # what the DUT has received of the PC's
            dut_seq = (int(seg.seq) + payload + syn_fin) % 2**32
    if pc_port is None or dut_port is None:
        return None
    return Live(proto, pc_port, dut_port, pc_seq, dut_seq, dut_win, pc_win)


def capture_live(netns_prefix: list[str], iface: str, pc_ip: str, dut_ip: str, proto: str, port: int) -> Live | None:
    """A few packets of the flow to or from `port` on the DUT's side, read now (None: none seen)."""
    if shutil.which("tcpdump") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="hil-live-") as tmp:
        path = Path(tmp) / "live.pcap"
        flt = f"{proto} and host {dut_ip} and host {pc_ip} and port {port}"
        argv = [*netns_prefix, "timeout", f"{CAPTURE_S:g}", "tcpdump", "-i", iface, "-c", str(PACKETS), "-s", "128",
                "-w", str(path), "-n", "-Z", "root", "--immediate-mode", flt]  # fmt: skip
        try:
            subprocess.run(argv, capture_output=True, timeout=CAPTURE_S + 5, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if not path.exists() or path.stat().st_size <= 24:
            return None
        try:
            with RawPcapReader(str(path)) as reader:  # type: ignore[no-untyped-call]
                frames = [bytes(d) for d, _ in reader]
        except Exception:  # scapy's own Scapy_Exception: a file tcpdump left unreadable is no capture
            return None
    return parse_live(frames, pc_ip, dut_ip, proto)


class PacketCount:
    """tcpdump counting the packets of a filter on the PC's interface while a class is sent."""

    def __init__(self, proc: subprocess.Popen[bytes], tmp: tempfile.TemporaryDirectory[str], path: Path) -> None:
        self.proc, self.tmp, self.path = proc, tmp, path

    @classmethod
    def start(cls, netns_prefix: list[str], iface: str, flt: str) -> PacketCount | None:
        if shutil.which("tcpdump") is None:
            return None
        tmp = tempfile.TemporaryDirectory(prefix="hil-count-")
        path = Path(tmp.name) / "count.pcap"
        argv = [*netns_prefix, "tcpdump", "-i", iface, "-s", "96", "-w", str(path), "-n", "-U", "-Z", "root",
                "--immediate-mode", flt]  # fmt: skip
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=die_with_parent)  # fmt: skip
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and not path.exists() and proc.poll() is None:
            time.sleep(0.02)
        time.sleep(0.1)  # listening once its file exists
        return cls(proc, tmp, path)

    def stop(self) -> int:
        """Stops the capture; the packets it saw."""
        time.sleep(0.2)  # answers still on their way
        self.proc.terminate()
        try:
            self.proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
        try:
            with RawPcapReader(str(self.path)) as reader:  # type: ignore[no-untyped-call]
                return sum(1 for _ in reader)
        except Exception:  # an empty or unreadable file: nothing seen
            return 0
        finally:
            self.tmp.cleanup()


class PinnedNeighbour:
    """Behind a DUT in the path, the peer's ARP entry for the PC held fixed (`nud permanent`)
    while a class is sent: the class's forged ARP is addressed to the peer and crosses the DUT as
    a bridge must let it, so without the pin it poisons the bench's own host and the verdict would
    be the peer's, not the DUT's. The entry is deleted afterwards (the peer learns it again)."""

    def __init__(self, peer_prefix: list[str], pc_ip: str, pc_mac: str) -> None:
        self.prefix, self.pc_ip, self.pc_mac = peer_prefix, pc_ip, pc_mac
        self.dev: str | None = None

    def __enter__(self) -> Self:
        out = subprocess.run([*self.prefix, "ip", "-o", "route", "get", self.pc_ip], capture_output=True, text=True,
                             timeout=10, check=False).stdout.split()  # fmt: skip
        self.dev = out[out.index("dev") + 1] if "dev" in out[:-1] else None
        if self.dev is not None:
            subprocess.run([*self.prefix, "ip", "neigh", "replace", self.pc_ip, "lladdr", self.pc_mac, "dev", self.dev,
                            "nud", "permanent"], capture_output=True, timeout=10, check=False)  # fmt: skip
        return self

    def __exit__(self, *exc: object) -> None:
        if self.dev is not None:
            subprocess.run([*self.prefix, "ip", "neigh", "del", self.pc_ip, "dev", self.dev], capture_output=True,
                           timeout=10, check=False)  # fmt: skip
