"""The stress profiles' streams between two DUTs (hil.traffic.stream_runs.streams_between_consoles),
on two stand-in consoles that answer as the project's firmware does: each console sends the
streams of its own direction to the other DUT and receives the other's, both are started with the
senders held back (`stream start SECONDS DELAY_MS`) after the partner reached the DUT, each
stream's sender report is its sending DUT's and its receiver report its receiving DUT's, and a
partner that ends badly is named. (tests/hil runs them between two firmwares: `./suite main
--bench bench/pair.yaml -m stress`.)"""

from __future__ import annotations

import pytest

from hil.console.driver import CommandReply
from hil.console.protocol import parse_final_line
from hil.errors import DutError
from hil.traffic.roles import DutSide
from hil.traffic.stream_runs import START_DELAY_MS, streams_between_consoles
from hil.traffic.streams import StreamProfile, StreamSpec

pytestmark = pytest.mark.selftest

PROFILE = StreamProfile(
    name="two",
    duration_s=5,
    streams=[
        StreamSpec(id=1, direction="dut_tx", size=100, burst=4, period_ms=200, threshold_ms=250, gap_us=1000),
        StreamSpec(id=4, direction="dut_rx", size=400, burst=2, period_ms=200, threshold_ms=250, gap_us=100),
    ],
)


class StandInConsole:
    """Records what it is sent; answers `stream` with a STREAM line per configured stream."""

    def __init__(self, received: int, status: str = "ok", ping_received: int = 1) -> None:
        self.sent: list[str] = []
        self.received, self.status, self.ping_received = received, status, ping_received

    def run_ok(self, line: str, timeout_s: float = 5.0) -> None:
        self.sent.append(line)

    def command(self, line: str, timeout_s: float) -> CommandReply:
        self.sent.append(line)
        final = f"RESULT ping status=ok target=x sent=1 received={self.ping_received}"
        return CommandReply("ping", parse_final_line(final), [])  # type: ignore[arg-type]

    def send(self, line: str) -> None:
        self.sent.append(line)

    def wait_text(self, pattern: str, timeout_s: float) -> None:
        assert self.sent[-1].startswith("stream start") or self.sent[-2].startswith("stream start")

    def wait_final(self, command: str, timeout_s: float) -> CommandReply:
        out = []
        for line in self.sent:
            words = line.split()
            if words[:3] == ["stream", "add", "tx"]:
                out.append(f"STREAM id={words[3]} dir=tx sent=100 bursts=25 send_errors=0")
            elif words[:3] == ["stream", "add", "rx"]:
                lost = 100 - self.received
                out += [f"STREAMLOSS id={words[3]} burst=3 lost={lost}"] if lost else []
                out.append(
                    f"STREAM id={words[3]} dir=rx received={self.received} outoforder=0 late=0 last_burst=24 "
                    f"lost={lost} lossy_bursts={int(lost > 0)} losses_capped=0 duplicates=0 stale=0 invalid=0"
                )
        final = parse_final_line(f"RESULT stream status={self.status} streams=2 duration_us=5000000")
        return CommandReply("stream", final, out)  # type: ignore[arg-type]


def test_each_dut_sends_its_direction_to_the_other_and_both_listen_first() -> None:
    dut, near = StandInConsole(received=100), StandInConsole(received=98)
    ends, evidence = streams_between_consoles(
        DutSide(dut, "10.77.0.2"),
        DutSide(near, "10.77.0.3"),
        "host-b",
        PROFILE,
        5.0,  # type: ignore[arg-type]
    )
    assert (
        "stream add tx 1 10.77.0.3 6001 100 4 200 1000" in dut.sent and "stream add rx 4 6004 400 2 200 250" in dut.sent
    )
    assert (
        "stream add tx 4 10.77.0.2 6004 400 2 200 100" in near.sent
        and "stream add rx 1 6001 100 4 200 250" in near.sent
    )
    start = f"stream start 5 {START_DELAY_MS}"
    assert dut.sent[-1] == start and near.sent[-1] == start
    assert near.sent.index("ping 10.77.0.2 -c 1 -W 1") < near.sent.index(start)  # the partner reached the DUT first
    sender, receiver = ends[1]  # dut_tx: the DUT sent it, its partner received it (2 lost)
    assert sender["dir"] == "tx" and receiver["received"] == 98 and receiver["losses"] == {"3": 2}
    sender, receiver = ends[4]  # dut_rx: the partner sent it, the DUT received it all
    assert sender["dir"] == "tx" and receiver["received"] == 100 and receiver["losses"] == {}
    assert "compressed_bursts" not in ends[4][0]  # a DUT sent it: nothing of it can be excused
    assert set(evidence) == {"DUT console (stream)", "DUT host-b console (stream)"}


def test_a_partner_that_ends_badly_or_cannot_reach_the_dut_is_named() -> None:
    with pytest.raises(DutError, match="streams on DUT host-b ended with"):
        streams_between_consoles(
            DutSide(StandInConsole(100), "10.77.0.2"), DutSide(StandInConsole(100, status="aborted"), "10.77.0.3"),  # type: ignore[arg-type]
            "host-b", PROFILE, 5.0,
        )  # fmt: skip
    with pytest.raises(DutError, match=r"DUT host-b could not ping the DUT at 10\.77\.0\.2"):
        streams_between_consoles(
            DutSide(StandInConsole(100), "10.77.0.2"), DutSide(StandInConsole(100, ping_received=0), "10.77.0.3"),  # type: ignore[arg-type]
            "host-b", PROFILE, 5.0,
        )  # fmt: skip
