"""Defects planted in the DUT's firmware on purpose (--plant-defect NAME=VALUE[,NAME=VALUE...]):
the suite's own test of its verdicts. The project's host firmware (the virtual bench's DUT and its
bridge build) has a `fault` console command (firmware/host/src/fault_inject.h) that makes it a
defective DUT: a sender that spends more CPU per frame, a receiver that loses frames silently,
ACKs held back, a buffer leaked per test... A verdict the suite can bet a release on fails such
a DUT as the DUT's, never passes it, never calls it a bench fault; tests/suite/test_planted_defects.py
shows it for each of those. The others (value 1) each switch off one of the firmware's guards
against hostile traffic, so that a check of the DUT under such traffic can be shown failing
without the guard: ping counting forged replies, the UDP server's reflector and first-sender
claim, a forged sequence number counted as loss, half-open TCP connections held 20 s, a silent
TCP connection holding the server, the TCP client waiting on a peer that stopped reading, forged
ARP re-pointing the DUT's ARP entries, (the bridge build only: an endpoint refuses it) a full
address table that stops learning and drops unicast to addresses it does not hold (MAC flooding),
and SYNs from addresses nobody answers ARP for evicting the DUT's ARP entry for its real peer.

Nothing is planted unless the option asks: the firmware starts with none, every bring-up of the
DUT (a restart or re-flash clears them) plants them again, and every record of the run says what
was planted (`planted_defects`), as does the report's environment."""

from __future__ import annotations

from collections.abc import Mapping

from hil.console.driver import ConsoleDriver
from hil.errors import DutError

# The firmware's defects (fault_plan.c's fault_defs, in its order), each with what it does and
# the largest value the firmware takes: a self-test compares them with the firmware's reply.
DEFECTS: dict[str, tuple[str, int]] = {
    "tx_work_us": ("CPU spent per frame sent (us)", 10_000),
    "rx_work_us": ("CPU spent per frame received (us)", 10_000),
    "tx_drop_ppm": ("frames to send dropped, counted as sent (per million)", 1_000_000),
    "rx_drop_ppm": ("frames received dropped silently (per million)", 1_000_000),
    "rx_reorder_ppm": ("received frames delivered after the next few (per million)", 1_000_000),
    "stall_ms": ("the firmware stops this long (ms), once per stall_every_ms", 1000),
    "stall_every_ms": ("the period of stall_ms (ms)", 60_000),
    "ack_delay_us": ("pure TCP ACKs sent held back (us)", 100_000),
    "ack_drop_ppm": ("pure TCP ACKs to send dropped (per million)", 1_000_000),
    "latency_us": ("every frame sent held back (us)", 100_000),
    "tx_clump_us": ("frames to send held and sent together at the end of each window (us)", 100_000),
    "udp_rate_pct": ("the UDP client paces at this share of the asked rate (%)", 100),
    "leak_per_test": ("receive buffers never freed, per iperf test ended", 128),
    # a guard of the firmware against hostile traffic switched off (1): the defect it prevents is back
    "trust_ping_replies": ("ping counts echo replies with a wrong ICMP checksum or payload", 1),
    "answer_any_fin": ("a finished UDP server answers anyone's FIN with its report (a reflector)", 1),
    "keep_first_sender": ("a UDP server's test stays with its first sender (a stray datagram keeps the client out)", 1),
    "trust_udp_seq": ("a UDP server counts a forged sequence number jump as loss", 1),
    "hold_half_open": ("half-open TCP connections held 20 s, a SYN beyond the backlog or the pool dropped", 1),
    "keep_silent_clients": ("a TCP connection that sends nothing holds the iperf server", 1),
    "wait_closed_window": ("the TCP client waits on a peer that stopped reading (window closed)", 1),
    "trust_arp_changes": ("any ARP packet re-points the DUT's ARP entry for its sender (forged replies poison it)", 1),
    # the bridge build's only (its address table); the endpoint builds refuse it
    "fdb_never_moves": ("a learned address never moves to another bridge port until it ages out", 1),
    # every build
    "evict_arp_for_syn": ("each SYN from an address without an ARP entry answered: a flood evicts the PC's entry", 1),
    "take_data_acking_unsent": ("a TCP segment acknowledging data never sent still delivers its data", 1),
}
# the defects that take a partner to act: a stall needs its period and its length
PAIRS = {"stall_ms": "stall_every_ms", "stall_every_ms": "stall_ms"}


def parse_planted(text: str) -> dict[str, int]:
    """NAME=VALUE[,NAME=VALUE...] -> the defects to plant; ValueError naming the problem."""
    out: dict[str, int] = {}
    for item in (part.strip() for part in text.split(",")):
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--plant-defect: {item!r} is not NAME=VALUE (defects: {', '.join(DEFECTS)})")
        if name not in DEFECTS:
            raise ValueError(f"--plant-defect: no defect {name!r} (defects: {', '.join(DEFECTS)})")
        what, most = DEFECTS[name]
        if not value.isdigit() or not 0 < int(value) <= most:
            raise ValueError(f"--plant-defect: {name} takes a whole number from 1 to {most} ({what}), got {value!r}")
        if name in out:
            raise ValueError(f"--plant-defect: {name} is given twice")
        out[name] = int(value)
    for name, partner in PAIRS.items():
        if name in out and partner not in out:
            raise ValueError(f"--plant-defect: {name} needs {partner} too ({DEFECTS[partner][0]})")
    return out


def describe(planted: Mapping[str, int]) -> str:
    """The planted defects in words for a report: "tx_work_us=120 (CPU spent per frame sent (us))"."""
    return ", ".join(f"{k}={v} ({DEFECTS[k][0]})" for k, v in planted.items())


def plant(console: ConsoleDriver, planted: Mapping[str, int]) -> dict[str, int]:
    """Clears the firmware's defects and plants `planted`, checked against its reply (what the
    firmware then reports, every defect with its value). A console without the command (a stock
    or board firmware) is a DutError saying so: the option needs the project's host firmware."""
    reply = console.command("fault clear", timeout_s=10)
    if not reply.final.ok:
        raise DutError(
            f"--plant-defect: the DUT's firmware refused `fault clear` ({reply.final.reason}): planted defects need "
            "the project's host firmware (the virtual bench's DUT or its bridge build)"
        )
    final = reply.final
    for name, value in planted.items():
        final = console.run_ok(f"fault {name} {value}", 10)
    reported = {k: int(v) for k, v in final.fields.items() if k in DEFECTS and str(v).isdigit()}
    wrong = {k: v for k, v in planted.items() if reported.get(k) != v}
    if wrong or set(reported) != set(DEFECTS):
        raise DutError(f"--plant-defect: the DUT reports {final.text!r} after planting {dict(planted)}")
    return {k: v for k, v in reported.items() if v}
