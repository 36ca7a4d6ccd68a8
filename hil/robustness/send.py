"""Sends the frames of a PCAP out of one interface at a given rate, as they are (a raw
AF_PACKET socket: no address, checksum or length is touched), and says in JSON what it sent.

Runs inside the namespace of the PC's interface (the suite starts it there:
`ip netns exec <ns> python -m hil.robustness.send ...`). A frame the interface refuses as larger
than its MTU allows (EMSGSIZE) is counted, not sent, and the run goes on; a full send queue
(ENOBUFS) is waited out; any other error stops the run (exit code 2). With --watch-pid, the
sending stops as soon as that process (the DUT's program on the bench PC) has exited: the frames
sent until then are the ones that reached it, the last of them the ones to look at.

    python -m hil.robustness.send --iface IF --pcap FILE --pps RATE [--watch-pid PID]
"""

from __future__ import annotations

import argparse
import errno
import json
import socket
import sys
import time
from pathlib import Path

from scapy.utils import RawPcapReader

ETHERNET = 1  # the PCAP link type of Ethernet frames
ENOBUFS_WAIT_S = 0.001
ENOBUFS_TRIES = 1000


def read_frames(path: Path) -> list[bytes]:
    """The Ethernet frames of a PCAP (scapy's raw reader: bytes as written, no dissection);
    ValueError for another link type (e.g. Linux cooked captures of `-i any`)."""
    with RawPcapReader(str(path)) as reader:  # type: ignore[no-untyped-call]
        if reader.linktype != ETHERNET:
            raise ValueError(f"link type {reader.linktype}, not Ethernet ({ETHERNET}): capture on one interface")
        return [bytes(data) for data, _ in reader]


def running(pid: int | None) -> bool:
    """The process exists and is not a zombie (a program that exited, not yet reaped by its parent)."""
    if pid is None:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def send(iface: str, frames: list[bytes], pps: float, watch_pid: int | None = None) -> dict[str, object]:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((iface, 0))
    refused = 0
    sent = 0
    stopped_at: int | None = None
    start = time.perf_counter()
    try:
        for i, frame in enumerate(frames):
            if not running(watch_pid):
                stopped_at = i
                break
            due = start + i / pps
            while (ahead := due - time.perf_counter()) > 0:
                time.sleep(ahead)
            for _ in range(ENOBUFS_TRIES):
                try:
                    sock.send(frame)
                    sent += 1
                    break
                except OSError as exc:
                    if exc.errno == errno.EMSGSIZE:
                        refused += 1
                        break
                    if exc.errno != errno.ENOBUFS:
                        raise
                    time.sleep(ENOBUFS_WAIT_S)
            else:
                raise OSError(errno.ENOBUFS, f"the send queue stayed full for {ENOBUFS_TRIES * ENOBUFS_WAIT_S:g} s")
    finally:
        sock.close()
    elapsed = time.perf_counter() - start
    return {"frames": len(frames), "sent": sent, "refused_mtu": refused, "stopped_at": stopped_at,
            "elapsed_s": round(elapsed, 4), "pps": round(sent / elapsed, 1) if elapsed > 0 else None}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hil.robustness.send", description=__doc__.splitlines()[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--pcap", type=Path, required=True)
    ap.add_argument("--pps", type=float, required=True)
    ap.add_argument("--watch-pid", type=int, default=None)
    args = ap.parse_args(argv)
    if args.pps <= 0:
        ap.error(f"--pps must be positive (got {args.pps:g})")
    try:
        frames = read_frames(args.pcap)
    except Exception as exc:  # scapy raises its own Scapy_Exception for a file that is not a PCAP
        print(f"cannot read {args.pcap}: {exc}", file=sys.stderr)
        return 2
    try:
        print(json.dumps(send(args.iface, frames, args.pps, args.watch_pid)))
    except OSError as exc:  # no such interface, no permission for a raw socket, the link went down
        print(f"cannot send on {args.iface}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
