"""The `zephyr-zperf` dialect: Zephyr's zperf sample (samples/net/zperf) on its shell - `zperf udp|tcp
upload` (the DUT sends), `zperf udp|tcp download` (the DUT receives) and `net ping`. Outputs are
read by hil.console.dialects.zperf_format. zperf speaks iperf 2 on the wire: the PC side runs iperf
2, whose numbers stay the reference where the PC receives."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hil.config.sections import NetworkConfig, WifiConfig
from hil.console.dialects import zperf_format as fmt
from hil.console.dialects.base import LinkFacts, RadioReading, collect, quiet_read
from hil.console.dialects.capabilities import DialectInfo, NotApplicable
from hil.console.dialects.registry import register_dialect
from hil.console.driver import ConsoleDriver
from hil.console.protocol import FinalLine
from hil.errors import ConsoleTimeout, DutError
from hil.tools.ping import PingStats
from hil.traffic.endpoints import (
    ConsoleEndpoint,
    Endpoint,
    FlowSpec,
    Generator,
    ReceiverReport,
    Receiving,
    SenderReport,
)

SHELL_QUIET_S = 0.5
SERVER_START_S = 10.0


@register_dialect
class ZperfDriver:
    info = DialectInfo(
        "zephyr-zperf",
        "Zephyr's zperf sample",
        frozenset({"iperf", "ping"}),
        {
            "client_amount": "zperf upload runs for a duration; it has no byte count",
            "concurrent": "the project drives one zperf session at a time (upload and download share the console)",
            "ping_flood": "`net ping` sends one request per interval and prints every reply, no flood mode",
            "streams": "the stress streams are a service of the project's firmware",
            "builds": "a stock image has one build: no TCP_WND / TCP_MSS builds to flash",
            "nodelay": "zperf has no option to turn Nagle's algorithm off",
            "tcp_counters": "the zperf sample's console counts no TCP segments",
        },
        sdk="zephyr",
        image="the zperf sample's build/zephyr/zephyr.elf",
    )
    ping_resolution_ms = 0.01  # `net ping` prints time=%.2f ms (whole ms without an FPU)

    def __init__(self, console: ConsoleDriver) -> None:
        self.console = console
        self.version = "unknown"
        self.config = ""

    def identify(self, timeout_s: float) -> FinalLine:
        """Asks `zperf version` until the shell answers (`Version: 1.1`, `Config: ...`)."""
        lines: list[str] = []
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            self.console.send("zperf version")
            lines = quiet_read(self.console, SHELL_QUIET_S, min(3.0, left), _has_version)
            if _has_version(lines):
                break
            if any("command not found" in fmt.clean(x) for x in lines):
                raise DutError("the DUT's shell has no `zperf` command: is this Zephyr's zperf sample?")
        else:
            tail = " | ".join(x.strip() for x in lines[-3:]) or "no output"
            raise ConsoleTimeout(f"the DUT did not answer `zperf version` within {timeout_s:g} s ({tail})")
        for line in lines:
            key, _, value = fmt.clean(line).strip().partition(":")
            if key == "Version":
                self.version = value.strip()
            if key == "Config":
                self.config = value.strip()
        fields = {"name": "zephyr-zperf", "version": self.version, "target": "zephyr", "variant": "stock",
                  "zperf_config": self.config.replace(" ", ",")}  # fmt: skip
        return FinalLine("RESULT", "version", fields)

    def endpoint(self, name: str, ip: str) -> Endpoint:
        return ZperfEndpoint(self, name, ip)

    def abort_running(self) -> None:
        """Stops the download servers an earlier test may have left (an upload blocks the shell
        until its duration ends: nothing to stop)."""
        for proto in ("udp", "tcp"):
            self.console.send(f"zperf {proto} download stop")
            quiet_read(self.console, SHELL_QUIET_S, 5.0, lambda ls, p=proto: any(fmt.server_stopped(p, x) for x in ls))

    def join_wifi(self, wifi: WifiConfig, net: NetworkConfig, joined: LinkFacts | None) -> LinkFacts:
        raise NotApplicable("the suite drives Zephyr's zperf sample as a wired endpoint: it has no Wi-Fi join for it")

    def radio(self, wifi: WifiConfig) -> RadioReading:
        raise NotApplicable("the suite drives Zephyr's zperf sample as a wired endpoint: no Wi-Fi radio to read")

    def ping_missing(self) -> str | None:
        return None

    def ping(self, target: str, count: int, interval_s: float, timeout_s: float) -> tuple[PingStats, str]:
        line = f"net ping -c {count} -i {max(1, round(interval_s * 1000))} {target}"
        self.console.send(line)
        lines = collect(self.console, lambda ls: fmt.ping_finished(count, ls), timeout_s, f"`{line}`")
        quiet_read(self.console, SHELL_QUIET_S, 3.0, lambda _: False)  # a late "Ping timeout" is not the next command's
        p = fmt.parse_ping(count, lines)
        return PingStats(p.sent, len(p.rtts_ms), p.rtts_ms), "\n".join([line, *lines])

    def flood_ping(self, target: str, count: int, size: int, timeout_s: float) -> tuple[PingStats, str]:
        raise NotApplicable(self.info.lacks["ping_flood"])

    def facts(self) -> dict[str, object]:
        return {}

    def counters(self, mark: bool = False) -> dict[str, int] | None:
        return None  # no counters as numbers

    def stats(self) -> tuple[str | None, dict[str, int] | None]:
        return None, None


def _has_version(lines: list[str]) -> bool:
    texts = [fmt.clean(x).strip() for x in lines]
    return any(t.startswith("Version:") for t in texts) and any(t.startswith("Config:") for t in texts)


def _seconds(flow: FlowSpec) -> int:
    return max(1, math.ceil(flow.duration_s))


@dataclass
class _ZperfReceiving:
    end: ZperfEndpoint
    flow: FlowSpec
    line: str

    def report(self, timeout_s: float) -> ReceiverReport:
        console = self.end.driver.console
        proto = self.flow.proto
        lines = collect(console, lambda ls: fmt.session_finished(proto, ls), timeout_s, f"`{self.line}` (its session)")
        try:
            session = fmt.parse_session(proto, lines)
        finally:
            console.send(f"zperf {proto} download stop")
            quiet_read(console, SHELL_QUIET_S, 5.0, lambda ls: any(fmt.server_stopped(proto, x) for x in ls))
        out = ReceiverReport(session.mbps, duration_s=session.duration_s,
                             bytes=round(session.mbps * 1e6 / 8 * session.duration_s))  # fmt: skip
        if proto == "udp":
            out.lost, out.jitter_ms = session.lost, session.jitter_ms
            out.datagrams = (session.packets or 0) + (session.lost or 0)
        out.sender_is_reference = proto == "tcp"
        out.details["dut_reported_mbps"] = round(session.mbps, 3)
        out.raw[f"{self.end.label} console"] = "\n".join([self.line, *lines])
        return out


class ZperfEndpoint(ConsoleEndpoint):
    """The DUT's zperf: iperf 2 on the wire, its results read from the shell."""

    def __init__(self, driver: ZperfDriver, name: str, ip: str) -> None:
        super().__init__(name, ip)
        self.driver = driver

    @contextmanager
    def receive(self, flow: FlowSpec, generator: Generator) -> Iterator[Receiving]:
        console = self.driver.console
        line = f"zperf {flow.proto} download {flow.port}"
        for attempt in (1, 2):
            console.send(line)

            def answered(ls: list[str]) -> bool:
                return any(
                    fmt.server_started(flow.proto, x) or fmt.already_started(flow.proto, x) or fmt.error_in(x)
                    for x in ls
                )

            lines = collect(console, answered, SERVER_START_S, f"`{line}` (its server starting)")
            if any(fmt.already_started(flow.proto, x) for x in lines) and attempt == 1:
                console.send(f"zperf {flow.proto} download stop")  # left by an earlier test: start it anew
                collect(console, lambda ls: any(fmt.server_stopped(flow.proto, x) for x in ls), 5.0, "the stop")
                continue
            if (err := next((e for x in lines if (e := fmt.error_in(x))), None)) is not None:
                raise DutError(f"DUT refused `{line}`: {err}")
            break
        yield _ZperfReceiving(self, flow, line)

    def send(self, flow: FlowSpec, to: str, generator: Generator) -> SenderReport:
        if flow.amount:
            raise NotApplicable(self.driver.info.lacks["client_amount"])
        size = flow.length or (1470 if flow.proto == "udp" else 1460)
        if flow.proto == "udp":
            rate = f"{round((flow.rate_mbps or 1.0) * 1000)}K"  # bit/s with zperf's K (x1000 since Zephyr 3.6)
            line = f"zperf udp upload {to} {flow.port} {_seconds(flow)} {size} {rate}"
        else:
            line = f"zperf tcp upload {to} {flow.port} {_seconds(flow)} {size}"
        console = self.driver.console
        console.send(line)
        lines = collect(console, fmt.upload_finished, flow.timeout_s, f"`{line}`")
        raw = {f"{self.label} console": "\n".join([line, *lines])}
        if (capped := fmt.size_capped(lines)) is not None and capped < size:
            raise DutError(
                f"zperf sent {capped}-byte packets, not {size}: build the sample with "
                f"CONFIG_NET_ZPERF_MAX_PACKET_SIZE={max(size, 1472)}"
            )
        up = fmt.parse_upload(flow.proto, lines)
        return SenderReport(up.client_mbps, bytes=round(up.client_mbps * 1e6 / 8 * up.client_duration_s), raw=raw)

    def abort(self) -> None:
        self.driver.abort_running()
