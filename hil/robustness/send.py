"""Sends the frames of a PCAP out of one interface at a given rate, as they are (a raw
AF_PACKET socket: no address, checksum or length is touched), and says in JSON what it sent.

Runs inside the namespace of the PC's interface (the suite starts it there:
`ip netns exec <ns> python -m hil.robustness.send ...`). A frame the interface refuses (larger
than its MTU allows) is counted by the error, not sent, and the run goes on.

    python -m hil.robustness.send --iface IF --pcap FILE --pps RATE
"""

from __future__ import annotations

import argparse
import errno
import json
import socket
import sys
import time
from collections import Counter
from pathlib import Path

from scapy.utils import RawPcapReader


def read_frames(path: Path) -> list[bytes]:
    """The frames of a PCAP (scapy's raw reader: bytes as written, no dissection)."""
    with RawPcapReader(str(path)) as reader:  # type: ignore[no-untyped-call]
        return [bytes(data) for data, _ in reader]


def send(iface: str, frames: list[bytes], pps: float) -> dict[str, object]:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((iface, 0))
    refused: Counter[str] = Counter()
    sent = 0
    start = time.perf_counter()
    try:
        for i, frame in enumerate(frames):
            due = start + i / pps
            while (ahead := due - time.perf_counter()) > 0:
                time.sleep(ahead)
            try:
                sock.send(frame)
                sent += 1
            except OSError as exc:
                refused[errno.errorcode.get(exc.errno or 0, str(exc.errno))] += 1
    finally:
        sock.close()
    elapsed = time.perf_counter() - start
    return {"frames": len(frames), "sent": sent, "refused": dict(refused), "elapsed_s": round(elapsed, 4),
            "pps": round(sent / elapsed, 1) if elapsed > 0 else None}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hil.robustness.send", description=__doc__.splitlines()[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--pcap", type=Path, required=True)
    ap.add_argument("--pps", type=float, required=True)
    args = ap.parse_args(argv)
    if args.pps <= 0:
        ap.error(f"--pps must be positive (got {args.pps:g})")
    try:
        frames = read_frames(args.pcap)
    except (OSError, ValueError) as exc:
        print(f"cannot read {args.pcap}: {exc}", file=sys.stderr)
        return 2
    try:
        print(json.dumps(send(args.iface, frames, args.pps)))
    except OSError as exc:  # no such interface, no permission for a raw socket
        print(f"cannot send on {args.iface}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
