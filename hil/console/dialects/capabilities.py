"""What a console dialect can do, and why a case is not applicable to it.

A case needs features of the DUT's console when its traffic starts or ends there (a DUT that ends
the traffic); a case needing one the DUT's dialect lacks is skipped at collection with the
dialect's reason, never run and never passed. The project firmware (`hil-fw`) has them all; stock
test firmware has what its console offers. Each dialect's module declares its `DialectInfo` on its
driver (hil.console.dialects.registry).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The features a case may need of the DUT's console.
FEATURES: dict[str, str] = {
    "iperf": "an iperf 2 compatible client and server (time mode, -l, UDP -b)",
    "client_amount": "a client that sends a byte count (iperf -n) instead of a duration",
    "concurrent": "a server and a client at the same time (both directions at once)",
    "ping": "a ping command towards the PC",
    "ping_flood": "a ping that sends on each reply and prints only a summary (ping -f)",
    "streams": "the stream service of the stress profiles (several timed UDP streams)",
    "builds": "build configurations with other TCP_WND / TCP_MSS values to flash",
    "nodelay": "a TCP client with Nagle's algorithm off (iperf -N, TCP_NODELAY)",
    "tcp_counters": "its own count of the TCP segments it sends and receives (hil-fw `stats`)",
    "serial_transfer": "file transfer through its console, raw bytes in acknowledged blocks (the project "
    "firmware's `serial` command)",
    "restart": "a command that resets the device (the project firmware's `restart`: RFC 6201's reset time)",
}


class NotApplicable(Exception):
    """A case asks the DUT's firmware for something it cannot do (found when it runs: e.g. an
    iperf without -b); the case is skipped with this reason, never passed."""


@dataclass(frozen=True)
class DialectInfo:
    name: str  # the bench file's console.dialect
    what: str  # the firmware that speaks it, as the report names it
    features: frozenset[str]
    # why a missing feature is missing (the skip reason's second half)
    lacks: dict[str, str] = field(default_factory=dict)
    # the SDK whose stock firmware speaks it ("esp-idf", "zephyr"): a DUT kind runs the dialects of
    # the SDKs it names (hil.dut.section); None: the project's own firmware, which every kind runs
    sdk: str | None = None
    # where a build of that stock firmware leaves the image to flash (a kind's firmware.image)
    image: str | None = None

    def __post_init__(self) -> None:
        unknown = (self.features | set(self.lacks)) - set(FEATURES)
        if unknown:
            raise ValueError(f"dialect {self.name}: unknown features {sorted(unknown)} (one of {sorted(FEATURES)})")
        if set(self.lacks) & self.features:
            raise ValueError(f"dialect {self.name}: a reason it lacks {sorted(set(self.lacks) & self.features)}")

    @property
    def stock(self) -> bool:
        """Stock test firmware (Espressif's iperf example, Zephyr's zperf), not the project's."""
        return self.sdk is not None

    def missing(self, needs: frozenset[str]) -> list[str]:
        return sorted(needs - self.features)

    def not_applicable(self, needs: frozenset[str]) -> str | None:
        """The skip reason of a case needing `needs`, None when the dialect serves it."""
        missing = self.missing(needs)
        if not missing:
            return None
        why = "; ".join(self.lacks.get(f, f"it has no {FEATURES[f]}") for f in missing)
        return f"not applicable to console dialect {self.name} ({self.what}): {why}"
