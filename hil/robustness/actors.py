"""Peers that misbehave with a real TCP stack: the PC's own kernel does the handshakes, this
program only decides what a connection then does. Run in the PC's namespace by the robustness
family (`ip netns exec <ns> python -m hil.robustness.actors ...`), each prints one JSON line with
what it did when it ends.

    idle     --to IP --port P --count N --hold S
             opens N connections to IP:P and holds them open S seconds, sending nothing (the
             connections a service must not let hold it), then closes them
    sink     --bind IP --port P --hold S [--read-after S2]
             accepts connections on P and reads nothing for S2 seconds (default: S), its receive
             buffer small, so the sender meets a closed window; then reads what is buffered and
             counts it; ends S seconds after it started

Exit code 0 with the JSON line; 2 with one line on stderr when it could not run at all (no
address, port in use).
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import sys
import time

SINK_RCVBUF = 4096  # the kernel doubles it: a window that closes after a few segments
CONNECT_TIMEOUT_S = 2.0


def idle(to: str, port: int, count: int, hold_s: float) -> dict[str, object]:
    """N connections that send nothing, held `hold_s`; how many the DUT accepted and how many it
    reset or closed while they were held (a service that drops silent clients does)."""
    socks: list[socket.socket] = []
    refused = 0
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(CONNECT_TIMEOUT_S)
        try:
            s.connect((to, port))
            s.setblocking(False)
            socks.append(s)
        except OSError:
            refused += 1
            s.close()
    time.sleep(hold_s)
    dropped = 0
    for s in socks:
        try:
            if s.recv(1) == b"":
                dropped += 1  # the DUT closed it
        except BlockingIOError:
            pass  # still open, nothing sent: held
        except OSError:
            dropped += 1  # reset
        s.close()
    return {"actor": "idle", "connections": count, "accepted": len(socks), "refused": refused, "dropped": dropped}


def sink(bind: str, port: int, hold_s: float, read_after_s: float) -> dict[str, object]:
    """Accepts on `port`, reads nothing until `read_after_s` (a peer whose window closes), then
    drains; the bytes it received in all and the connections it took."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SINK_RCVBUF)  # inherited by accepted sockets
    srv.bind((bind, port))
    srv.listen(4)
    srv.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ)
    conns: list[socket.socket] = []
    watched: set[int] = set()
    received = 0
    start = time.monotonic()
    print(json.dumps({"actor": "sink", "listening": port}), flush=True)
    while (left := hold_s - (time.monotonic() - start)) > 0:
        if time.monotonic() - start >= read_after_s:  # reading from now on: every connection watched
            for c in conns:
                if c.fileno() not in watched:
                    watched.add(c.fileno())
                    sel.register(c, selectors.EVENT_READ)
        for key, _ in sel.select(timeout=min(left, 0.05)):
            if key.fileobj is srv:
                conn, _ = srv.accept()
                conn.setblocking(False)
                conns.append(conn)
            else:
                n, ended = _drain(key.fileobj)  # type: ignore[arg-type]
                received += n
                if ended:
                    sel.unregister(key.fileobj)
    for c in conns:
        received += _drain(c)[0]
        c.close()
    srv.close()
    return {"actor": "sink", "connections": len(conns), "received_bytes": received}


def _drain(conn: socket.socket) -> tuple[int, bool]:
    """(bytes read now, the connection ended)."""
    n = 0
    while True:
        try:
            data = conn.recv(65536)
        except BlockingIOError:
            return n, False
        except OSError:
            return n, True
        if not data:
            return n, True
        n += len(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hil.robustness.actors", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="actor", required=True)
    a = sub.add_parser("idle")
    a.add_argument("--to", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--count", type=int, required=True)
    a.add_argument("--hold", type=float, required=True)
    s = sub.add_parser("sink")
    s.add_argument("--bind", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--hold", type=float, required=True)
    s.add_argument("--read-after", type=float, default=None)
    args = ap.parse_args(argv)
    try:
        if args.actor == "idle":
            out = idle(args.to, args.port, args.count, args.hold)
        else:
            out = sink(args.bind, args.port, args.hold, args.hold if args.read_after is None else args.read_after)
    except OSError as exc:
        print(f"actor {args.actor}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
