"""The output of Espressif's iperf console command (ESP-IDF's `examples/wifi/iperf` and
`examples/ethernet/iperf`), its `ping`, `free`, `heap`, `version` and Wi-Fi commands, read from the
console's lines. These firmwares print no machine-readable final line: a test's end is its
summary line or the engine's `iperf exit`, an error is one of the lines below.

Three report layouts exist (where each comes from):
- ESP-IDF v4.x example (`examples/common_components/iperf/iperf.c` v4.4 l.67-96; v4.0-4.3
  `examples/wifi/iperf/components/iperf/iperf.c` l.73-100; the same layout in the v5.1/v5.2 in-tree
  copy): header `printf("\\n%16s %s\\n", "Interval", "Bandwidth")`, lines
  `printf("%4d-%4d sec       %.2f Mbits/sec\\n", ...)`, the summary `0-<time>` the same way (v4.4:
  the mean of the interval values, only when the run reached its time; v4.3: total bytes / time);
  Mbits are 10^6 bits in v4.x and 2^20 in v5.1/v5.2 (`coefficient[] = {1048576.0, ...}`), which
  print the same text: the units follow the firmware's `version` (`IDF Version:%s`);
- `espressif/iperf-cmd` 0.1.x (`iperf/iperf.c` l.81-116, v0.1.1-v0.1.4): header
  `printf("\\nInterval       Bandwidth\\n")`, lines `printf("%2d.0-%2d.0 sec  %.2f %cbits/sec\\n", ...)`
  with binary units (`/1024.0/1024.0`), summary `0.0-<time>.0` (mean of the intervals);
- `espressif/iperf-cmd` 1.0.x (`iperf/iperf_report.c` l.41, 68, 126, v1.0.2): connect line
  `"[%3d] local %s:%u connected to %s:%u"`, header `"\\n[ ID] Interval\\t\\tTransfer\\tBandwidth\\n"`,
  lines `"[%3d] %2u.0-%2u.0 sec\\t%2.2f %cBytes\\t%.2f %c%ss/sec"` with decimal units, the summary from
  0.0 with the total bytes - its last line (no `iperf exit` at INFO level).

Log lines (`ESP_LOGx`: `X (ms) tag: text`, optionally coloured): `iperf exit` (v4.x, 0.1.x; always
the engine's last), `Socket created`, `Socket bound, port %d`, `accept: %s,%d`, `Successfully
connected`, `[TCP Server] Socket created` (1.0.x); errors `iperf is running` (v4.x engine),
`iperf is already running.` (0.1.x command), `should specific client/server mode`, `sta has no IP`,
`Socket unable to connect: errno %d`, `cannot start TCP client: ...` and `an error occurred while
running ...` (1.0.x), argtable's `iperf: invalid option "-x"`, `unexpected argument "x"`, the REPL's
`Unrecognized command`; `--abort` (iperf-cmd): `DONE.IPERF_STOP,OK.` (0.1.x), `DONE.IPERF_STOP,OK`
(1.0.x); `-a` (v4.x): `wait current iperf to stop ...` then `iperf exit`.

`ping` (ESP-IDF `examples/protocols/icmp_echo/main/echo_example_main.c` l.34-71, the same text as
esp-protocols' `console_cmd_ping` used by the iperf example since v5.1): `"%u bytes from %s
icmp_seq=%u ttl=%u time=%u ms"`, `"From %s icmp_seq=%d timeout"`, `"\\n--- %s ping statistics ---"`,
`"%u packets transmitted, %u received, %u%% packet loss, time %ums"` (the last line), `"ping: unknown
host %s"`. `free`: `"%u\\n"` (`cmd_system.c` l.119 v4.4); `heap`: `"min heap size: %u"`;
Wi-Fi: `sta <ssid> [<pass>]` (v4.x - v5.2, `cmd_wifi.c`) or `sta_connect <ssid> [<pass>]`
(`esp-qa/wifi-cmd`, v5.3+), success from esp_netif's `"%s ip: IPSTR, mask: IPSTR, gw: IPSTR"`;
`scan <ssid>` -> `[%s][rssi=%d]` (v4.x), `sta_scan <ssid>` -> `+SCAN:[mac][%s][rssi=%d]...`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hil.console.dialects.text import clean
from hil.errors import DutError
from hil.numbers import BYTES, COUNT, DBM, MBPS, MS, PERCENT, SECONDS, checked, checked_int, require

# a log line: "I (12345) iperf: text" (the level letter, the ms since boot, the tag)
_LOG = re.compile(r"^([EWIDV]) \((\d+)\) ([^:]+): (.*)$")

# v4.x example (and v5.1/v5.2 in-tree): "   0-   3 sec       8.43 Mbits/sec"
_V4_LINE = re.compile(r"^\s*(\d+)-\s*(\d+) sec {7}(\d+\.\d+) ([KM]?)bits/sec$", re.ASCII)
# iperf-cmd 0.1.x: " 0.0- 3.0 sec  23.45 Mbits/sec"
_V01_LINE = re.compile(r"^\s*(\d+)\.0-\s*(\d+)\.0 sec {2}(\d+\.\d+) ([KM]?)bits/sec$", re.ASCII)
# iperf-cmd 1.0.x: "[  1]  0.0- 1.0 sec\t2.95 MBytes\t23.59 Mbits/sec"
_V1_LINE = re.compile(
    r"^\[\s*(\d+)\]\s+(\d+)\.0-\s*(\d+)\.0 sec\s+(\d+\.\d+) ([KM]?)\x00?Bytes"
    r"\s+(\d+\.\d+) ([KM]?)\x00?(bit|Byte)s/sec$",
    re.ASCII,
)
_V1_CONNECT = re.compile(r"^\[\s*(\d+)\] local (\S+):(\d+) connected to (\S+):(\d+)$")

ERROR_TEXTS = (
    "iperf is running",
    "iperf is already running",
    "should specific client/server mode",
    "sta has no IP",
    "Socket unable to connect",
    "Socket unable to bind",
    "Unable to create socket",
    "Error occurred during listen",
    "Unable to accept connection",
    "cannot start TCP",
    "cannot start UDP",
    "an error occurred while running",
    "create buffer: not enough memory",
    "invalid destination address",
    "Unrecognized command",
    "Invalid iperf ID",
)
_ARGTABLE = re.compile(
    r"^\w+: (invalid option|unexpected argument|option \"[^\"]+\" requires an argument|invalid argument"
    r"|missing option|excess option|integer overflow)"
)


def message(line: str) -> str:
    """A line's text: a log line's message without its level, time and tag; colour codes and
    prompts removed."""
    text = clean(line).strip()
    m = _LOG.match(text)
    return m.group(4).strip() if m else text


def error_in(line: str) -> str | None:
    """The iperf / console error a line reports, or None."""
    text = message(line)
    if _ARGTABLE.match(clean(line).strip()):
        return clean(line).strip()
    return text if any(e in text for e in ERROR_TEXTS) else None


@dataclass(frozen=True)
class Interval:
    start_s: int
    end_s: int
    mbps: float  # decimal Mbit/s (10^6 bit/s), whatever the firmware's units were
    transfer_bytes: int | None = None  # 1.0.x prints the interval's bytes
    instance: int | None = None  # 1.0.x: the iperf instance id


_SCALE = {"": 1.0, "K": 1e3, "M": 1e6}
_BINARY_SCALE = {"": 1.0, "K": 1024.0, "M": 1048576.0}


def _to_mbps(value: str, prefix: str, binary: bool, unit: str, line: str) -> float:
    """A printed rate (`value` [K|M]bits/sec or Bytes/sec) in decimal Mbit/s, checked."""
    scale = (_BINARY_SCALE if binary else _SCALE)[prefix] * (8.0 if unit == "Byte" else 1.0) / 1e6
    return checked(value, MBPS, what="rate", line=line, scale=scale)


def _interval(line: str, start: str, end: str, mbps: float, transfer: int | None = None,
              instance: str | None = None) -> Interval:  # fmt: skip
    start_s = checked_int(start, SECONDS, what="interval start", line=line)
    end_s = checked_int(end, SECONDS, what="interval end", line=line)
    require(end_s >= start_s, f"an interval that ends before it starts ({start_s}-{end_s} s)", line)
    number = checked_int(instance, COUNT, what="iperf instance", line=line) if instance is not None else None
    return Interval(start_s, end_s, mbps, transfer, number)


def parse_interval(line: str, v4_binary: bool = False) -> Interval | None:
    """One interval or summary line of any of the three layouts, or None; DutError quoting the line
    for a malformed, implausible or impossible number. `v4_binary`: the v4.x layout's Mbits are
    2^20 bits (ESP-IDF v5.1/v5.2's in-tree example)."""
    text = clean(line).strip("\n")
    stripped = text.strip()
    if m := _V1_LINE.match(stripped):
        transfer = checked(m.group(4), BYTES, what="transfer", line=stripped, scale=_SCALE[m.group(5)])
        mbps = _to_mbps(m.group(6), m.group(7), False, m.group(8), stripped)
        return _interval(stripped, m.group(2), m.group(3), mbps, round(transfer), m.group(1))
    if m := _V01_LINE.match(text):
        return _interval(stripped, m.group(1), m.group(2), _to_mbps(m.group(3), m.group(4), True, "bit", stripped))
    if m := _V4_LINE.match(text):
        return _interval(stripped, m.group(1), m.group(2), _to_mbps(m.group(3), m.group(4), v4_binary, "bit", stripped))
    return None


def layout_of(lines: list[str]) -> str | None:
    """Which report layout the lines are in: "v4", "iperf-cmd-0.1", "iperf-cmd-1.0" (None: no report yet)."""
    for line in lines:
        text = clean(line)
        if _V1_LINE.match(text.strip()) or _V1_CONNECT.match(text.strip()):
            return "iperf-cmd-1.0"
        if _V01_LINE.match(text):
            return "iperf-cmd-0.1"
        if _V4_LINE.match(text):
            return "v4"
    return None


@dataclass
class IperfReport:
    """What one iperf run printed: its intervals, its summary (if the run reached its time), how it
    ended."""

    intervals: list[Interval] = field(default_factory=list)
    summary: Interval | None = None
    exited: bool = False  # `iperf exit` (v4.x, 0.1.x)
    error: str | None = None
    peer: str | None = None  # `accept: ip,port` / 1.0.x connect line
    layout: str | None = None

    @property
    def mbps(self) -> float:
        """The run's rate: its summary, else the mean of its intervals (an early stop)."""
        if self.summary is not None:
            return self.summary.mbps
        if not self.intervals:
            raise DutError("the DUT's iperf printed no interval report")
        return sum(i.mbps for i in self.intervals) / len(self.intervals)

    @property
    def seconds(self) -> float:
        if self.summary is not None:
            return float(self.summary.end_s - self.summary.start_s)
        return float(sum(i.end_s - i.start_s for i in self.intervals))

    @property
    def transfer_bytes(self) -> int | None:
        """Bytes moved: 1.0.x prints them; the other layouts give rate x time."""
        if self.summary is not None and self.summary.transfer_bytes is not None:
            return self.summary.transfer_bytes
        return round(self.mbps * 1e6 / 8.0 * self.seconds) if self.intervals or self.summary else None


def _is_summary(iv: Interval, seen: list[Interval]) -> bool:
    """A report line from 0 after the first interval (which also starts at 0): the summary."""
    return iv.start_s == 0 and bool(seen)


def read_report(lines: list[str], v4_binary: bool = False) -> IperfReport:
    """The report of one run from its lines."""
    rep = IperfReport(layout=layout_of(lines))
    for line in lines:
        text = message(line)
        if rep.error is None and (err := error_in(line)) is not None:
            rep.error = err
        if text == "iperf exit":
            rep.exited = True
        if m := re.match(r"^accept: ([\d.]+),\s*(\d+)", text):
            rep.peer = f"{m.group(1)}:{m.group(2)}"
        if m := _V1_CONNECT.match(clean(line).strip()):
            rep.peer = f"{m.group(4)}:{m.group(5)}"
        iv = parse_interval(line, v4_binary)
        if iv is None:
            continue
        if _is_summary(iv, rep.intervals):
            rep.summary = iv
        else:
            rep.intervals.append(iv)
    return rep


def run_finished(lines: list[str]) -> bool:
    """The run is over: `iperf exit`, an error, or (1.0.x, which prints nothing after it) its
    summary line."""
    rep = read_report(lines)
    if rep.exited or rep.error is not None:
        return True
    return rep.summary is not None and rep.layout == "iperf-cmd-1.0"


def server_ready(line: str) -> bool:
    """A server is listening: `Socket created` / `Socket bound` (v4.4, 0.1.x), `[TCP Server] Socket
    created` (1.0.x), `iperf tcp server create successfully` (v4.3), the v4.x Ethernet example's
    plain `mode=...-server` line."""
    text = message(line)
    return (
        text.startswith(("Socket created", "Socket bound", "[TCP Server] Socket created"))
        or text.startswith("[UDP Server] Socket created")
        or text.startswith("iperf tcp server create successfully")
        or text.startswith("iperf udp server create successfully")
        or bool(re.match(r"^mode=(tcp|udp)-server ", text) and "sip=" in text and not _LOG.match(clean(line).strip()))
    )


def abort_finished(lines: list[str], until_done: bool = False) -> bool:
    """`iperf --abort` / `-a` ended: `DONE.IPERF_STOP,OK[.]` / `,FAIL.` (iperf-cmd: `until_done`, it
    comes after the engine's `iperf exit`), `iperf exit` after `wait current iperf to stop ...`
    (v4.x), or an argtable error (the option is unknown)."""
    for line in lines:
        text = message(line)
        if text.startswith("DONE.IPERF_STOP,") or (text == "iperf exit" and not until_done) or error_in(line):
            return True
    return False


# --- ping -------------------------------------------------------------------------------------
_PING_REPLY = re.compile(r"^(\d+) bytes from (\S+) icmp_seq=(\d+) ttl=(\d+) time=(\d+) ms$", re.ASCII)
_PING_STATS = re.compile(r"^(\d+) packets transmitted, (\d+) received, (\d+)% packet loss, time (\d+)ms$", re.ASCII)


@dataclass(frozen=True)
class EspPing:
    sent: int
    received: int
    rtts_ms: tuple[float, ...]
    loss_pct_printed: int


def ping_finished(lines: list[str]) -> bool:
    return any(_PING_STATS.match(message(x)) or message(x).startswith("ping: unknown host") for x in lines) or any(
        error_in(x) for x in lines
    )


def parse_ping(lines: list[str]) -> EspPing:
    """The replies' times and the statistics line. A reply line not in the format (`time=0.1.2 ms`,
    a line cut by a log line) is no reply: the statistics line counts them; a malformed or
    impossible number in the statistics is a DutError quoting it."""
    rtts: list[float] = []
    for line in lines:
        text = message(line)
        if text.startswith("ping: unknown host"):
            raise DutError(f"DUT ping: {text}")
        if (err := error_in(line)) is not None:
            raise DutError(f"DUT ping: {err}")
        if m := _PING_REPLY.match(text):
            rtts.append(checked(m.group(5), MS, what="time", line=text))
        if m := _PING_STATS.match(text):
            sent = checked_int(m.group(1), COUNT, what="transmitted", line=text)
            received = checked_int(m.group(2), COUNT, what="received", line=text)
            require(received <= sent, f"{received} received of {sent} sent", text)
            loss = checked_int(m.group(3), PERCENT, what="packet loss", line=text)
            checked_int(m.group(4), MS, what="time", line=text)
            return EspPing(sent, received, tuple(rtts), loss)
    raise DutError("the DUT's ping printed no statistics line")


# --- system and Wi-Fi commands -----------------------------------------------------------------
def free_heap(lines: list[str]) -> int | None:
    """`free`: the current free heap, a number alone on its line."""
    for line in lines:
        text = message(line)
        if re.fullmatch(r"[0-9]+", text):
            return checked_int(text, BYTES, what="free heap", line=text)
    return None


def min_free_heap(lines: list[str]) -> int | None:
    """`heap`: `min heap size: N`."""
    for line in lines:
        if m := re.search(r"min heap size: ([0-9]+)", text := message(line)):
            return checked_int(m.group(1), BYTES, what="min heap size", line=text)
    return None


def idf_version(lines: list[str]) -> str | None:
    """`version` (cmd_system): `IDF Version:v4.4.8`."""
    for line in lines:
        if m := re.search(r"IDF Version:\s*(\S+)", message(line)):
            return m.group(1)
    return None


def v4_layout_is_binary(version: str | None) -> bool:
    """The v4.x report layout counts Mbits of 2^20 bits in ESP-IDF v5.1 and v5.2's in-tree example."""
    m = re.match(r"v?([0-9]{1,6})\.([0-9]{1,6})", version or "")
    return bool(m) and (int(m.group(1)), int(m.group(2))) in ((5, 1), (5, 2))


def commands_in_help(lines: list[str]) -> set[str]:
    """The command names `help` lists (each entry starts at column 0: `name  [args]` or `name`)."""
    names = set()
    for line in lines:
        text = clean(line)
        if text and not text[0].isspace():
            word = text.split()[0]
            if re.fullmatch(r"[a-z_][a-z0-9_]*", word):
                names.add(word)
    return names


_STA_IP = re.compile(r"\bsta ip: ([\d.]+), mask: ([\d.]+), gw: ([\d.]+)")


def sta_ip(lines: list[str]) -> str | None:
    """The address esp_netif reports after a join: `sta ip: A, mask: M, gw: G`."""
    for line in lines:
        if m := _STA_IP.search(message(line)):
            return m.group(1)
    return None


def scan_rssi(lines: list[str], ssid: str) -> int | None:
    """The AP's RSSI from `scan` (`[ssid][rssi=-NN]`) or `sta_scan` (`+SCAN:[mac][ssid][rssi=-NN]...`)."""
    pattern = re.compile(r"\[" + re.escape(ssid) + r"\]\[rssi=(-?[0-9]+)\]")
    for line in lines:
        if m := pattern.search(text := message(line)):
            return checked_int(m.group(1), DBM, what="rssi", line=text)
    return None


def join_gave_up(lines: list[str]) -> str | None:
    """The join has failed for good: `WiFi Reconnect failed!` / `DONE.WIFI_CONNECT_START,FAIL...`
    (wifi-cmd, after its retries), `password less than 8` (v4.x); None while it may still succeed."""
    for line in lines:
        text = message(line)
        if "WiFi Reconnect failed" in text or "DONE.WIFI_CONNECT_START,FAIL" in text or "password less than 8" in text:
            return text
    return None


def join_last_reason(lines: list[str]) -> str | None:
    """The last disconnect the station reported while it kept trying (`sta disconnect, reconnect...`
    in v4.x, `WIFI_EVENT_STA_DISCONNECTED! reason: N` in wifi-cmd): the reason a join that timed out
    names."""
    for line in reversed(lines):
        text = message(line)
        if ("reason:" in text and "DISCONNECTED" in text) or "sta disconnect, reconnect" in text:
            return text
    return None
