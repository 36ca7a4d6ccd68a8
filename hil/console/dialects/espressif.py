"""The `espressif-iperf` dialect: ESP-IDF's iperf example (examples/wifi/iperf, examples/ethernet/iperf)
with Espressif's `iperf` console command - the in-tree one of ESP-IDF v4.x - v5.2 or the `iperf-cmd`
component (0.1.x, 1.0.x) - and the example's `ping`, `free`, `heap` and `version`. The output
formats are read by hil.console.dialects.espressif_format; what differs between versions
(`-a` or `--abort`, `-b` in Mbit/s or in bit/s with a suffix, whether there is a `ping`) is read
from the firmware's own `help`."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hil.config.sections import NetworkConfig, WifiConfig
from hil.console.dialects import espressif_format as fmt
from hil.console.dialects import espressif_wifi
from hil.console.dialects.base import LinkFacts, RadioReading, collect, quiet_read
from hil.console.dialects.capabilities import DialectInfo, NotApplicable
from hil.console.dialects.espressif_wifi import EspSoftAp, EspWifiLink
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

SERVER_START_S = 10.0
HELP_QUIET_S = 0.5


@dataclass
class IperfOptions:
    """What this firmware's `iperf` takes, from its `help` entry."""

    abort: str = "-a"  # v4.x: -a/--abort; iperf-cmd: --abort only
    bandwidth: str | None = None  # "mbit": -b <Mbit/s integer> (v4.4.1+, iperf-cmd 0.1.x); "suffix": -b 90m (1.0.x)
    length: bool = True  # -l (v4.4+)


def iperf_options(help_lines: list[str]) -> IperfOptions:
    text = "\n".join(fmt.message(x) for x in help_lines)
    opts = IperfOptions()
    opts.abort = "-a" if re.search(r"-a, --abort", text) else "--abort"
    if m := re.search(r"--bandwidth=<bandwidth>\s+(.*)", text):
        opts.bandwidth = "suffix" if "#[kmgKMG]" in m.group(1) or "in bits/sec" in m.group(1) else "mbit"
    opts.length = "--len=" in text
    return opts


def _help_ended(lines: list[str]) -> bool:
    """`help` then `version` were sent: the version's answer (or its refusal) follows the help."""
    return fmt.idf_version(lines) is not None or any(fmt.message(x) == "Unrecognized command" for x in lines)


@register_dialect
class EspressifDriver:
    info = DialectInfo(
        "espressif-iperf",
        "ESP-IDF's iperf example, iperf-cmd",
        frozenset({"iperf", "ping"}),
        {
            "client_amount": "its iperf has no -n (byte count); a client runs for -t seconds",
            "concurrent": "its iperf runs one test at a time (a second is refused while one runs)",
            "ping_flood": "its ping sends one request per interval and prints every reply, no flood mode",
            "streams": "the stress streams are a service of the project's firmware",
            "builds": "a stock image has one build: no TCP_WND / TCP_MSS builds to flash",
            "nodelay": "its iperf has no -N: Nagle's algorithm stays on",
            "tcp_counters": "its console counts no TCP segments (`free` and `heap` give the heap only)",
        },
        sdk="esp-idf",
    )
    ping_resolution_ms = 1.0  # its ping prints whole milliseconds (time=%u ms)

    def __init__(self, console: ConsoleDriver) -> None:
        self.console = console
        self.commands: set[str] = set()
        self.options = IperfOptions()
        self.idf_version: str | None = None

    # --- identity --------------------------------------------------------------------------
    def identify(self, timeout_s: float) -> FinalLine:
        """Asks `help` until the firmware lists an `iperf` command (its banner may have been
        lost when the port was opened), with `version` right after it: `IDF Version:` (or the
        REPL's `Unrecognized command` where there is none) ends the help's text."""
        lines: list[str] = []
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            self.console.send("help")
            self.console.send("version")
            lines = quiet_read(self.console, 1.0, min(5.0, left), _help_ended)
            self.commands = fmt.commands_in_help(lines)
            if "iperf" in self.commands:
                break
        else:
            tail = " | ".join(x.strip() for x in lines[-3:]) or "no output"
            raise ConsoleTimeout(f"the DUT listed no `iperf` command in its `help` within {timeout_s:g} s ({tail})")
        self.options = iperf_options(lines)
        self.idf_version = fmt.idf_version(lines)
        if "version" in self.commands and self.idf_version is None:  # its answer still coming
            out = quiet_read(self.console, HELP_QUIET_S, 5.0, lambda ls: fmt.idf_version(ls) is not None)
            self.idf_version = fmt.idf_version(out)
        fields = {
            "name": "espressif-iperf",
            "version": self.idf_version or "unknown",
            "target": "esp-idf",
            "variant": "stock",
            "iperf_abort": self.options.abort,
            "iperf_bandwidth": self.options.bandwidth or "none",
        }
        return FinalLine("RESULT", "version", fields)

    @property
    def rate_step_mbps(self) -> float | None:
        """The step of the UDP rates its iperf can be asked: whole Mbit/s where its `-b` takes them
        (v4.4.1+, iperf-cmd 0.1.x); None: any rate (a suffix in kbit/s: 0.001 Mbit/s)."""
        return 1.0 if self.options.bandwidth == "mbit" else None

    @property
    def v4_binary(self) -> bool:
        return fmt.v4_layout_is_binary(self.idf_version)

    # --- iperf ------------------------------------------------------------------------------
    def iperf_line(self, flow: FlowSpec, server_ip: str | None) -> str:
        parts = ["iperf", "-c", server_ip] if server_ip else ["iperf", "-s"]
        if flow.proto == "udp":
            parts.append("-u")
        parts += ["-p", str(flow.port), "-i", "1", "-t", str(max(2, math.ceil(flow.duration_s)))]
        if server_ip and flow.length:
            if not self.options.length:
                raise NotApplicable("the DUT's iperf has no -l (write length): ESP-IDF before v4.4")
            parts += ["-l", str(flow.length)]
        if server_ip and flow.rate_mbps:
            if self.options.bandwidth is None:
                raise NotApplicable("the DUT's iperf has no -b (it sends UDP as fast as it can): ESP-IDF before v4.4.1")
            if self.options.bandwidth == "mbit":  # whole Mbit/s
                parts += ["-b", str(max(1, round(flow.rate_mbps)))]
            else:
                parts += ["-b", f"{round(flow.rate_mbps * 1000)}k"]
        return " ".join(parts)

    def endpoint(self, name: str, ip: str) -> Endpoint:
        return EspressifEndpoint(self, name, ip)

    def abort_running(self) -> None:
        """`iperf -a` / `--abort`; with nothing running the firmware prints nothing."""
        self.console.send(f"iperf {self.options.abort}")
        until_done = self.options.abort == "--abort"  # iperf-cmd says DONE.IPERF_STOP after the engine's end
        quiet_read(self.console, 1.0, 15.0, lambda ls: fmt.abort_finished(ls, until_done))

    # --- Wi-Fi ------------------------------------------------------------------------------
    def join_wifi(self, wifi: WifiConfig, net: NetworkConfig, joined: LinkFacts | None) -> EspWifiLink:
        """The example's scan and join (hil.console.dialects.espressif_wifi), once per flash: its
        `sta_connect` drops and rebuilds the link, so a join it reported since stands."""
        if isinstance(joined, EspWifiLink):
            return joined
        return espressif_wifi.join(self, wifi, net)

    def start_softap(self, wifi: WifiConfig, net: NetworkConfig) -> EspSoftAp:
        """The example's `ap` (hil.console.dialects.espressif_wifi.start_ap): the SoftAP of a Wi-Fi pair."""
        return espressif_wifi.start_ap(self, wifi, net)

    def radio(self, wifi: WifiConfig) -> RadioReading:
        """The AP's RSSI from the example's scan (as ESP-IDF's own CI reads it at each attenuation);
        the example tells nothing of its MCS or retries."""
        rssi = espressif_wifi.scan(self, wifi.ssid)
        return RadioReading(rssi is not None, rssi_dbm=rssi, source="scan")

    # --- ping -------------------------------------------------------------------------------
    def ping_missing(self) -> str | None:
        if "ping" in self.commands:
            return None
        return "the firmware has no `ping` command (ESP-IDF's iperf example has one since v5.1)"

    def ping(self, target: str, count: int, interval_s: float, timeout_s: float) -> tuple[PingStats, str]:
        if (why := self.ping_missing()) is not None:
            raise NotApplicable(why)
        line = f"ping {target} -c {count} -i {interval_s:g} -W 1"
        self.console.send(line)
        lines = collect(self.console, fmt.ping_finished, timeout_s, f"`{line}`")
        p = fmt.parse_ping(lines)
        return PingStats(p.sent, p.received, p.rtts_ms), "\n".join([line, *lines])

    def flood_ping(self, target: str, count: int, size: int, timeout_s: float) -> tuple[PingStats, str]:
        raise NotApplicable(self.info.lacks["ping_flood"])

    # --- facts ------------------------------------------------------------------------------
    def facts(self) -> dict[str, object]:
        """The free and the minimum free heap (`free`, `heap`), as ESP-IDF's CI records with every result."""
        out: dict[str, object] = {}
        if "free" in self.commands:
            self.console.send("free")
            value = fmt.free_heap(quiet_read(self.console, HELP_QUIET_S, 5.0, lambda ls: fmt.free_heap(ls) is not None))
            if value is not None:
                out["free_heap_bytes"] = value
        if "heap" in self.commands:
            self.console.send("heap")
            lines = quiet_read(self.console, HELP_QUIET_S, 5.0, lambda ls: fmt.min_free_heap(ls) is not None)
            if (low := fmt.min_free_heap(lines)) is not None:
                out["min_free_heap_bytes"] = low
        return out

    def counters(self, mark: bool = False) -> dict[str, int] | None:
        return None  # no counters as numbers: `stats` shows what the firmware says

    def stats(self) -> tuple[str | None, dict[str, int] | None]:
        facts = self.facts()
        return ("\n".join(f"{k} = {v}" for k, v in facts.items()) if facts else None), None


@dataclass
class _EspReceiving:
    end: EspressifEndpoint
    flow: FlowSpec
    line: str
    lines: list[str]

    def report(self, timeout_s: float) -> ReceiverReport:
        console = self.end.driver.console
        lines = collect(console, fmt.run_finished, timeout_s, f"`{self.line}` (its report)", self.lines)
        rep = fmt.read_report(lines, self.end.driver.v4_binary)
        if rep.error is not None:
            raise DutError(f"the DUT's iperf server failed: {rep.error}")
        out = ReceiverReport(rep.mbps, bytes=rep.transfer_bytes, duration_s=rep.seconds)
        out.sender_is_reference = self.flow.proto == "tcp"  # TCP delivered what the PC's client sent
        out.raw[f"{self.end.label} console"] = "\n".join([self.line, *lines])
        out.details["dut_reported_mbps"] = round(rep.mbps, 3)
        return out


class EspressifEndpoint(ConsoleEndpoint):
    """The DUT's Espressif iperf: iperf 2 on the wire, its reports read from the console."""

    answers_udp_fin = False  # its UDP server sends no report: the PC's client need not wait for one

    def __init__(self, driver: EspressifDriver, name: str, ip: str) -> None:
        super().__init__(name, ip)
        self.driver = driver

    @contextmanager
    def receive(self, flow: FlowSpec, generator: Generator) -> Iterator[Receiving]:
        line = self.driver.iperf_line(flow, None)
        console = self.driver.console
        console.send(line)

        def started(ls: list[str]) -> bool:
            return any(fmt.server_ready(x) or fmt.error_in(x) for x in ls)

        lines = collect(console, started, SERVER_START_S, f"`{line}` (its server starting)")
        if (err := next((e for x in lines if (e := fmt.error_in(x))), None)) is not None:
            raise DutError(f"DUT refused `{line}`: {err}")
        yield _EspReceiving(self, flow, line, lines)

    def send(self, flow: FlowSpec, to: str, generator: Generator) -> SenderReport:
        line = self.driver.iperf_line(flow, to)
        console = self.driver.console
        console.send(line)
        lines = collect(console, fmt.run_finished, flow.timeout_s, f"`{line}`")
        rep = fmt.read_report(lines, self.driver.v4_binary)
        if rep.error is not None:
            raise DutError(f"the DUT's iperf client failed: {rep.error}")
        raw = {f"{self.label} console": "\n".join([line, *lines])}
        return SenderReport(rep.mbps, bytes=rep.transfer_bytes, raw=raw)

    def abort(self) -> None:
        self.driver.abort_running()
