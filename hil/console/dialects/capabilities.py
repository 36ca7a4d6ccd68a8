"""What each console dialect can do, and why a case is not applicable to it.

A case needs features of the DUT's console when its traffic starts or ends there (a DUT that ends
the traffic); a case needing one the DUT's dialect lacks is skipped at collection with the
dialect's reason, never run and never passed. The project firmware (`hil-fw`) has them all; stock
test firmware has what its console offers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Dialect = Literal["hil-fw", "espressif-iperf", "zephyr-zperf"]
DIALECTS: tuple[Dialect, ...] = ("hil-fw", "espressif-iperf", "zephyr-zperf")

# The features a case may need of the DUT's console.
FEATURES: dict[str, str] = {
    "iperf": "an iperf 2 compatible client and server (time mode, -l, UDP -b)",
    "client_amount": "a client that sends a byte count (iperf -n) instead of a duration",
    "concurrent": "a server and a client at the same time (both directions at once)",
    "ping": "a ping command towards the PC",
    "ping_flood": "a ping that sends on each reply and prints only a summary (ping -f)",
    "streams": "the stream service of the stress profiles (several timed UDP streams)",
    "builds": "build configurations with other TCP_WND / TCP_MSS values to flash",
}


class NotApplicable(Exception):
    """A case asks the DUT's firmware for something it cannot do (found when it runs: e.g. an
    iperf without -b); the case is skipped with this reason, never passed."""


@dataclass(frozen=True)
class DialectInfo:
    name: Dialect
    what: str  # the firmware that speaks it, as the report names it
    features: frozenset[str]
    # why a missing feature is missing (the skip reason's second half)
    lacks: dict[str, str] = field(default_factory=dict)

    def missing(self, needs: frozenset[str]) -> list[str]:
        return sorted(needs - self.features)

    def not_applicable(self, needs: frozenset[str]) -> str | None:
        """The skip reason of a case needing `needs`, None when the dialect serves it."""
        missing = self.missing(needs)
        if not missing:
            return None
        why = "; ".join(self.lacks.get(f, f"it has no {FEATURES[f]}") for f in missing)
        return f"not applicable to console dialect {self.name} ({self.what}): {why}"


INFO: dict[str, DialectInfo] = {
    "hil-fw": DialectInfo("hil-fw", "the project's firmware", frozenset(FEATURES)),
    "espressif-iperf": DialectInfo(
        "espressif-iperf",
        "ESP-IDF's iperf example, iperf-cmd",
        frozenset({"iperf", "ping"}),
        {
            "client_amount": "its iperf has no -n (byte count); a client runs for -t seconds",
            "concurrent": "its iperf runs one test at a time (a second is refused while one runs)",
            "ping_flood": "its ping sends one request per interval and prints every reply, no flood mode",
            "streams": "the stress streams are a service of the project's firmware",
            "builds": "a stock image has one build: no TCP_WND / TCP_MSS builds to flash",
        },
    ),
    "zephyr-zperf": DialectInfo(
        "zephyr-zperf",
        "Zephyr's zperf sample",
        frozenset({"iperf", "ping"}),
        {
            "client_amount": "zperf upload runs for a duration; it has no byte count",
            "concurrent": "the project drives one zperf session at a time (upload and download share the console)",
            "ping_flood": "`net ping` sends one request per interval and prints every reply, no flood mode",
            "streams": "the stress streams are a service of the project's firmware",
            "builds": "a stock image has one build: no TCP_WND / TCP_MSS builds to flash",
        },
    ),
}


def dialect_info(name: str) -> DialectInfo:
    return INFO[name]
