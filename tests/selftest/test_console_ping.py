"""A DUT's console pinging beside a load (hil.console.background_ping.ConsolePing: latency under
load DUT to DUT), on a console that prints as the project's firmware does: the ping's lines are
kept whoever reads them (the load's wait for its iperf result), its end is waited for when it comes
after the load's, a load that failed stops it, and a refusal is the DUT's."""

from __future__ import annotations

from collections import deque

import pytest

from hil.console.background_ping import ConsolePing
from hil.console.driver import ConsoleDriver
from hil.errors import DutError

pytestmark = pytest.mark.selftest

REPLY = "64 bytes from 10.77.0.2: icmp_seq={} ttl=255 time={} ms"
PING_END = ("RESULT ping status=ok target=10.77.0.2 size=56 sent=3 received=3 loss_pct=0 min_ms=4.100 "
            "avg_ms=4.300 max_ms=4.500 mdev_ms=0.163 rejected=0")  # fmt: skip
IPERF_END = (
    "RESULT iperf role=client proto=tcp status=ok peer=10.77.0.2:5001 bytes=7000000 duration_us=3000000 mbps=18.9"
)


class ScriptedSource:
    """A console's lines as the firmware prints them, in order; what was sent."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = deque(lines)
        self.sent: list[str] = []

    def send(self, line: str) -> None:
        self.sent.append(line)

    def read_line(self, timeout_s: float) -> str | None:
        return self.lines.popleft() if self.lines else None


def test_the_pings_lines_are_kept_while_the_load_reads_the_console() -> None:
    source = ScriptedSource([REPLY.format(1, 4.1), "iperf: TCP client sending", REPLY.format(2, 4.3),
                             REPLY.format(3, 4.5), PING_END, IPERF_END])  # fmt: skip
    console = ConsoleDriver(source)  # type: ignore[arg-type]
    with ConsolePing(console, "10.77.0.2", 0.15) as probe:
        console.wait_final("iperf -c 10.77.0.2", timeout_s=1)  # the load's own wait
    assert source.sent == ["ping 10.77.0.2 -c 3 -i 0.05 -W 1"]
    stats = probe.stats()
    assert (stats.sent, stats.received, stats.rtts_ms) == (3, 3, (4.1, 4.3, 4.5))
    assert "iperf" not in probe.text and probe.text.startswith("> ping 10.77.0.2")


def test_a_ping_that_ends_after_the_load_is_waited_for() -> None:
    source = ScriptedSource([REPLY.format(1, 4.1), IPERF_END, REPLY.format(2, 4.3), REPLY.format(3, 4.5), PING_END])
    console = ConsoleDriver(source)  # type: ignore[arg-type]
    with ConsolePing(console, "10.77.0.2", 0.15) as probe:
        console.wait_final("iperf -c 10.77.0.2", timeout_s=1)
    assert probe.stats().rtts_ms == (4.1, 4.3, 4.5) and not source.lines


def test_a_failed_load_stops_the_ping_and_a_refusal_is_the_duts() -> None:
    source = ScriptedSource([REPLY.format(1, 4.1)])
    console = ConsoleDriver(source)  # type: ignore[arg-type]
    with pytest.raises(DutError, match="load"), ConsolePing(console, "10.77.0.2", 0.15) as probe:
        raise DutError("the load failed")
    assert source.sent[-1] == "ping -a"
    with pytest.raises(DutError, match="gave no final line"):
        probe.stats()
    refused = ScriptedSource(["ERR ping busy: stream running (abort it with stream -a)"])
    with ConsolePing(ConsoleDriver(refused), "10.77.0.2", 0.15) as probe:  # type: ignore[arg-type]
        pass
    with pytest.raises(DutError, match=r"refused .*stream running"):
        probe.stats()
