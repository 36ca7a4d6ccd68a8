"""Sends malformed iperf 2 headers to a DUT's iperf server, for robustness checks.

Run inside the PC namespace:  python -m hil.traffic.malformed_iperf udp|tcp HOST PORT COUNT SEED

UDP: COUNT datagrams of random length (0..1472) whose first words are random or crafted
(negative, huge and 64-bit sequence numbers, client-header flag words, truncated headers).
TCP: COUNT connections that each send a random or crafted first message and close; between
connections the caller must restart the DUT's server, so the program waits for a line on stdin
before each connection ("next") and prints "sent N" after it.
Prints a summary line ``sent=N`` at the end.
"""

from __future__ import annotations

import contextlib
import random
import socket
import struct
import sys

FLAG_WORDS = [0x80000000, 0x40000000, 0x48010098, 0x08000000, 0xFFFFFFFF, 0x20000000, 0x04000000, 0]


def crafted_header(rng: random.Random) -> bytes:
    kind = rng.randrange(8)
    if kind == 0:  # truncated header
        return rng.randbytes(rng.randrange(0, 16))
    if kind == 1:  # negative or extreme 32-bit sequence numbers
        seq = rng.choice([-1, -(2**31), 2**31 - 1, 0, rng.randrange(-(2**31), 2**31)])
        return struct.pack("!iIII", seq, rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32))
    if kind == 2:  # 64-bit sequence announced by a client header
        head = struct.pack("!IIII", rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32))
        return head + struct.pack("!I", rng.choice(FLAG_WORDS)) + rng.randbytes(rng.randrange(0, 64))
    if kind == 3:  # a client header at the start of a TCP stream or after the UDP header
        return struct.pack("!Iiiiii", rng.choice(FLAG_WORDS), *(rng.getrandbits(31) for _ in range(5)))
    if kind == 4:  # microseconds out of range, time in the far future
        return struct.pack("!IIII", 1, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return rng.randbytes(rng.randrange(0, 200))


def datagram(rng: random.Random) -> bytes:
    head = crafted_header(rng)
    length = rng.choice([len(head), rng.randrange(0, 1473)])
    payload = head + rng.randbytes(max(0, length - len(head)))
    return payload[:1472]


def send_udp(host: str, port: int, count: int, rng: random.Random) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _ in range(count):
            # a FIN-like datagram may end the server's test: ICMP port unreachable, go on
            with contextlib.suppress(ConnectionRefusedError):
                s.sendto(datagram(rng), (host, port))
    return count


def send_tcp(host: str, port: int, count: int, rng: random.Random) -> int:
    sent = 0
    for _ in range(count):
        if sys.stdin.readline().strip() != "next":
            break
        with socket.create_connection((host, port), timeout=5) as s:
            s.sendall(crafted_header(rng) + rng.randbytes(rng.randrange(0, 3000)))
        sent += 1
        print(f"sent {sent}", flush=True)
    return sent


def main(argv: list[str]) -> int:
    if len(argv) != 6 or argv[1] not in ("udp", "tcp"):
        print("usage: malformed_iperf udp|tcp HOST PORT COUNT SEED", file=sys.stderr)
        return 2
    proto, host, port, count, seed = argv[1], argv[2], int(argv[3]), int(argv[4]), int(argv[5])
    rng = random.Random(seed)
    sent = send_udp(host, port, count, rng) if proto == "udp" else send_tcp(host, port, count, rng)
    print(f"sent={sent}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
