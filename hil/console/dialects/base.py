"""What the suite asks of a DUT's console, whichever dialect it speaks (hil.console.dialects): who
the DUT is, the DUT-console traffic endpoint, a ping towards the PC, stopping what still runs,
joining the bench's access point (a Wi-Fi station), and the facts worth recording with every
result (free heap). One driver per dialect implements it over the same line console
(hil.console.driver) and registers itself (hil.console.dialects.registry)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from hil.config.sections import NetworkConfig, WifiConfig
from hil.console.dialects.capabilities import DialectInfo
from hil.console.driver import ConsoleDriver
from hil.console.protocol import FinalLine
from hil.errors import ConsoleTimeout
from hil.tools.ping import PingStats
from hil.traffic.endpoints import Endpoint


class LinkFacts(Protocol):
    """What a DUT reported of the link it joined (e.g. Wi-Fi BSSID, channel, RSSI)."""

    def as_fields(self) -> dict[str, object]: ...
    def describe(self) -> str: ...


RADIO_COUNTS = ("tx_frames", "tx_retries", "tx_failed", "rx_frames", "rx_retries", "rx_failed")


@dataclass(frozen=True)
class RadioReading:
    """What a Wi-Fi DUT's console tells of its radio now; None where it does not tell."""

    associated: bool
    rssi_dbm: int | None = None
    noise_dbm: int | None = None
    mcs: int | None = None
    phy_mbps: float | None = None
    counts: dict[str, int] | None = None  # RADIO_COUNTS since the radio started
    source: str = ""  # the console command it came from
    joins: int | None = None  # associations since the firmware started (None: a console that does not say)

    def as_fields(self) -> dict[str, object]:
        fields = {"rssi_dbm": self.rssi_dbm, "noise_dbm": self.noise_dbm, "mcs": self.mcs, "phy_mbps": self.phy_mbps}
        return {k: v for k, v in fields.items() if v is not None}


class DialectDriver(Protocol):
    info: DialectInfo
    console: ConsoleDriver
    ping_resolution_ms: float  # the step of the round-trip times its ping prints

    def identify(self, timeout_s: float) -> FinalLine:
        """Waits until the firmware answers and says what it is (`fields`: name, version, and `ip`
        when the console tells the DUT's address)."""
        ...

    def endpoint(self, name: str, ip: str) -> Endpoint:
        """The DUT's own iperf as a traffic endpoint."""
        ...

    def ping_missing(self) -> str | None:
        """Why the DUT cannot ping the PC (None: it can)."""
        ...

    def ping(self, target: str, count: int, interval_s: float, timeout_s: float) -> tuple[PingStats, str]:
        """The DUT pings `target`: the statistics and the console's text."""
        ...

    def flood_ping(self, target: str, count: int, size: int, timeout_s: float) -> tuple[PingStats, str]:
        """Requests sent on each reply, replies not printed (dialects with `ping_flood` only)."""
        ...

    def abort_running(self) -> None:
        """Stops whatever an earlier test left running on the DUT."""
        ...

    def join_wifi(self, wifi: WifiConfig, net: NetworkConfig, joined: LinkFacts | None) -> LinkFacts:
        """Joins the access point `wifi` with the bench file's address (a Wi-Fi station), with
        retries; `joined`: what the DUT reported since it was last flashed (None: nothing yet)."""
        ...

    def radio(self, wifi: WifiConfig) -> RadioReading:
        """The Wi-Fi station's radio now: association, RSSI and, where the console gives them, the
        noise, the MCS and PHY rate, the frames, retries and losses counted since start."""
        ...

    def facts(self) -> dict[str, object]:
        """Numbers recorded with every result (ESP-IDF: free and minimum free heap)."""
        ...

    def counters(self, mark: bool = False) -> dict[str, int] | None:
        """The DUT's own counters as numbers (drops, memory errors, pools, CPU busy time), read
        before and after a measurement for its loss ledger (hil.wire.ledger) and the DUT's side
        (hil.results.dut_side); `mark`: the heap's and pools' high-water marks restart after this
        reading (the one before a measurement). None: the dialect has none."""
        ...

    def stats(self) -> tuple[str | None, dict[str, int] | None]:
        """The DUT's own counters as text (a case's stats before and after; None: the dialect has
        none) and as numbers where the firmware gives them (the pools), from one console round trip."""
        ...


def collect(
    console: ConsoleDriver, done: Callable[[list[str]], bool], timeout_s: float, what: str,
    lines: list[str] | None = None,
) -> list[str]:  # fmt: skip
    """Reads lines until `done(lines)`; a DUT that never gets there within timeout_s is a
    ConsoleTimeout naming `what` and the last lines it printed."""
    seen = lines if lines is not None else []
    deadline = time.monotonic() + timeout_s
    while not done(seen):
        remaining = deadline - time.monotonic()
        line = console.next_line(max(0.0, remaining), what) if remaining > 0 else None
        if line is None:
            tail = " | ".join(x.strip() for x in seen[-3:]) or "no output"
            raise ConsoleTimeout(f"DUT did not finish {what} within {timeout_s:g} s ({tail})")
        seen.append(line)
    return seen


def quiet_read(console: ConsoleDriver, quiet_s: float, limit_s: float, done: Callable[[list[str]], bool]) -> list[str]:
    """Reads until `done(lines)`, or the console has been quiet for quiet_s, or limit_s passed (a
    command whose output has no last line of its own, e.g. `help`)."""
    lines: list[str] = []
    deadline = time.monotonic() + limit_s
    while not done(lines) and (remaining := deadline - time.monotonic()) > 0:
        line = console.next_line(min(quiet_s, remaining))
        if line is None:
            break
        lines.append(line)
    return lines
