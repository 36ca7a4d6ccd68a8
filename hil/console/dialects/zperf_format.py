"""Zephyr's zperf and `net ping` output, read from the console's lines (no machine-readable line:
the end of a test is the last line of its block).

Where each pattern comes from (zephyrproject-rtos/zephyr, `subsys/net/lib/zperf/zperf_shell.c`,
versions 3.6 - 4.2 read: commits b2d53f60, 00a83979, and main with `zperf jobs`):
- numbers: `print_number()` / `print_number_64()` print `"%u.%s%u %s"` (two truncated decimals) or
  `"%u %s"` with the units `Mbps` / `Kbps` for rates (KBPS[] = {1000, 0}) and `m` / `s` / `ms` /
  `us` for durations (TIME_US[]); before 3.6 K and M were 1024 (PR #67973), read here as printed;
- upload header: `"Duration:\t"`, `"Packet size:\t%u bytes\n"`, `"Rate:\t\t%u kbps\n"`,
  `"Starting...\n"`, and for UDP `"Rate:\t\t"` + number, `"Packet duration %u ms|us\n"`;
- UDP upload block (`shell_udp_upload_print_stats`): `"-\nUpload completed!\n"`, optional
  `"LAST PACKET NOT RECEIVED!!!\n"`, `"Statistics:\t\tserver\t(client)\n"`, `"Duration:\t\t"` n
  `"\t("` n `")"`, `"Num packets:\t\t%u\t(%u)\n"`, `"Num packets out order:\t%u\n"`,
  `"Num packets lost:\t%u\n"`, `"Jitter:\t\t\t"` n, `"Rate:\t\t\t"` n `"\t("` n `")"` - the last line;
- TCP upload block: `"-\nUpload completed!\n"`, `"Duration:\t"` n, `"Num packets:\t%u\n"`,
  `"Num errors:\t%u (retry or fail)\n"`, `"Rate:\t\t"` n - the last line (4.2+: more tabs);
- download (`udp_session_cb` / `tcp_session_cb`): `"UDP server started on port %u\n"`,
  `"New session started.\n"`, `"End of session!\n"`, `" duration:\t\t"`, `" received packets:\t%u\n"`,
  `" nb packets lost:\t%u\n"`, `" nb packets outorder:\t%u\n"`, `" jitter:\t\t\t"`, `" rate:\t\t\t"` -
  the last line; TCP: `"TCP server started on port %u\n"`, `"New TCP session started.\n"`,
  `"TCP session ended\n"`, `" Duration:\t\t"`, `" rate:\t\t\t"` - the last line;
  `"UDP server stopped\n"`, `"UDP server already started!\n"`, `"UDP server not running!\n"` (TCP alike);
- errors: `"UDP upload failed (%d)\n"` (no server report at all: no statistics block),
  `"TCP upload failed (%d)\n"`, `"UDP session error.\n"`, `"TCP session error.\n"`,
  `"Not enough parameters.\n"`, `"Unrecognized argument: %s\n"`, `"Parse error: %s\n"`,
  `"Invalid IPv4 address %s\n"`, `"Invalid port %s\n"`, `"Failed to start UDP server!\n"`;
  the log warning `"Packet size too large! max size: %u"` (CONFIG_NET_ZPERF_MAX_PACKET_SIZE, 1024 by
  default: the datagrams sent are smaller than asked);
- `net ping` (`subsys/net/lib/shell/ping.c`): `"PING %s\n"`, per reply
  `"%d bytes from %s to %s: icmp_seq=%d ttl=%d "` + `"time=%.2f ms"` (`"time=%d ms"` without an FPU),
  `"Ping timeout\n"` when the last reply is missing 2 s after the last request; no summary line;
  errors `"Target host missing\n"`, `"Invalid IP address\n"`, `"Parse error: %s\n"`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hil.console.dialects.text import clean
from hil.errors import DutError
from hil.numbers import BYTES, COUNT, MBPS, MS, SECONDS, Unit, checked, checked_int, quote, require

_NUMBER = re.compile(r"([0-9]+(?:\.[0-9]+)?) ?(Mbps|Kbps|m|s|ms|us)")
_RATE_UNITS = {"Mbps": 1.0, "Kbps": 1e-3}
_TIME_UNITS_S = {"m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6}

ERRORS = re.compile(
    r"^(UDP|TCP) upload failed|^(UDP|TCP) session error|^Not enough parameters|^Unrecognized argument"
    r"|^Parse error|^Invalid (IPv4 |IPv6 |IP )?address|^Invalid port|^Failed to start|^Please specify"
    r"|^Cannot parse address|^Unable to (bind|parse)|(UDP|TCP) support is not enabled|command not found"
    r"|^Target host missing|^Invalid IP address"
)
_TOO_LARGE = re.compile(r"Packet size too large! max size: ([0-9]+)")
_COUNT = re.compile(r"[0-9]+")


def rate_mbps(text: str, line: str = "") -> float:
    """`94.21 Mbps` / `870 Kbps` -> Mbit/s; DutError quoting `line` (default: text) for anything else."""
    m = _NUMBER.fullmatch(text.strip())
    if m is None or m.group(2) not in _RATE_UNITS:
        raise DutError(f"zperf printed a rate it does not print: {text.strip()!r}{_in(line)}")
    return checked(m.group(1), MBPS, what="rate", line=line or text.strip(), scale=_RATE_UNITS[m.group(2)])


def duration_s(text: str, line: str = "") -> float:
    """`10.00 s` / `1.00 m` / `250.00 ms` / `63 us` -> seconds (DutError as rate_mbps)."""
    return _duration(text, SECONDS, 1.0, line)


def jitter_ms(text: str, line: str = "") -> float:
    """A jitter, printed as a duration (`63 us`), in ms."""
    return _duration(text, MS, 1e3, line)


def _duration(text: str, unit: Unit, per_s: float, line: str) -> float:
    m = _NUMBER.fullmatch(text.strip())
    if m is None or m.group(2) not in _TIME_UNITS_S:
        raise DutError(f"zperf printed a duration it does not print: {text.strip()!r}{_in(line)}")
    return checked(
        m.group(1), unit, what="duration", line=line or text.strip(), scale=_TIME_UNITS_S[m.group(2)] * per_s
    )


def _in(line: str) -> str:
    return f" in {quote(line)}" if line else ""


@dataclass(frozen=True)
class _Field:
    value: str
    line: str  # the line it was read from, for an error to quote


def _fields(lines: list[str]) -> dict[str, _Field]:
    """`Key:<tabs>value` lines of a block, keyed by their lower-case key."""
    out: dict[str, _Field] = {}
    for raw in lines:
        key, sep, value = clean(raw).strip().partition(":")
        if sep and ("\t" in raw or value.startswith(" ")):
            out.setdefault(key.strip().lower(), _Field(value.strip(), clean(raw).strip()))
    return out


def _get(f: dict[str, _Field], key: str, block: str) -> _Field:
    if key not in f:
        raise DutError(f"zperf's {block} block lacks its {key!r} line")
    return f[key]


def _count(field: _Field, what: str) -> int:
    """A count, alone in its field or first (`Num errors:\t0 (retry or fail)`)."""
    m = _COUNT.match(field.value)
    if m is None or (m.end() < len(field.value) and not field.value[m.end()].isspace()):
        raise DutError(f"zperf printed a {what} that is not a count: {quote(field.line)}")
    return checked_int(m.group(0), COUNT, what=what, line=field.line)


def error_in(line: str) -> str | None:
    """The zperf / shell error a line is, or None."""
    text = clean(line).strip()
    return text if ERRORS.search(text) else None


def size_capped(lines: list[str]) -> int | None:
    """The payload size zperf capped a packet to (`Packet size too large! max size: N`), or None."""
    for line in lines:
        if m := _TOO_LARGE.search(line):
            return checked_int(m.group(1), BYTES, what="max size", line=clean(line).strip())
    return None


@dataclass(frozen=True)
class ZperfUpload:
    proto: str
    client_duration_s: float
    client_mbps: float
    packets_sent: int
    # UDP: the iperf server's report (None for TCP)
    server_duration_s: float | None = None
    server_mbps: float | None = None
    packets_received: int | None = None
    lost: int | None = None
    outoforder: int | None = None
    jitter_ms: float | None = None
    errors: int | None = None  # TCP: send errors (retried or failed)
    server_report_decoded: bool = True  # False: "LAST PACKET NOT RECEIVED!!!"


def upload_finished(lines: list[str]) -> bool:
    """The upload's block is complete: its `Rate:` line after `Upload completed!`, or an error."""
    texts = [clean(x).strip() for x in lines]
    if any(error_in(t) for t in texts):
        return True
    if "Upload completed!" not in texts:
        return False
    after = texts[texts.index("Upload completed!") + 1 :]
    return any(t.startswith("Rate:") for t in after)


ZPERF_FIN_REPEATS = 10


def parse_upload(proto: str, lines: list[str]) -> ZperfUpload:
    """The result of `zperf udp|tcp upload`; DutError naming the problem when it failed."""
    texts = [clean(x) for x in lines]
    for t in texts:
        if (err := error_in(t)) is not None:
            raise DutError(f"zperf: {err}")
    stripped = [t.strip() for t in texts]
    if "Upload completed!" not in stripped:
        raise DutError("zperf: no `Upload completed!` block")
    block = texts[stripped.index("Upload completed!") + 1 :]
    decoded = not any("LAST PACKET NOT RECEIVED" in t for t in block)
    f = _fields(block)

    def get(key: str) -> _Field:
        return _get(f, key, "upload")

    if proto == "tcp":
        d, r = get("duration"), get("rate")
        packets, errors = _count(get("num packets"), "packet count"), _count(get("num errors"), "error count")
        return ZperfUpload("tcp", duration_s(d.value, d.line), rate_mbps(r.value, r.line), packets, errors=errors)
    d, r, n, lost_line, j = get("duration"), get("rate"), get("num packets"), get("num packets lost"), get("jitter")
    (server_d, client_d), (server_r, client_r), (received, sent) = _pair(d), _pair(r), _pair(n)
    packets_sent, packets_received = _count(sent, "packet count"), _count(received, "packet count")
    lost = _count(lost_line, "lost count")
    # the server's count may include the client's end-of-test datagrams, which the client repeats
    # (up to ZPERF_FIN_REPEATS times) until the server reports and leaves out of its own count
    require(
        packets_received <= packets_sent + ZPERF_FIN_REPEATS, "the server received more packets than were sent", n.line
    )
    require(lost <= packets_sent, "more packets lost than were sent", lost_line.line)
    return ZperfUpload(
        "udp", duration_s(client_d.value, d.line), rate_mbps(client_r.value, r.line), packets_sent,
        duration_s(server_d.value, d.line), rate_mbps(server_r.value, r.line), packets_received, lost,
        _count(get("num packets out order"), "out-of-order count"), jitter_ms(j.value, j.line),
        server_report_decoded=decoded,
    )  # fmt: skip


def _pair(field: _Field) -> tuple[_Field, _Field]:
    """`server\t(client)` -> (server, client)."""
    m = re.fullmatch(r"(.+?)\s*\((.+)\)", field.value.strip())
    if m is None:
        raise DutError(f"zperf: expected `server (client)`, got {field.value!r} in {quote(field.line)}")
    return _Field(m.group(1), field.line), _Field(m.group(2), field.line)


@dataclass(frozen=True)
class ZperfSession:
    """What `zperf udp|tcp download` printed at the end of a session."""

    proto: str
    duration_s: float
    mbps: float
    packets: int | None = None  # UDP
    lost: int | None = None
    outoforder: int | None = None
    jitter_ms: float | None = None


_SESSION_END = {"udp": "End of session!", "tcp": "TCP session ended"}


def session_finished(proto: str, lines: list[str]) -> bool:
    """A download session's block is complete (its ` rate:` line) or it failed."""
    texts = [clean(x).strip() for x in lines]
    if any(t in ("UDP session error.", "TCP session error.") for t in texts):
        return True
    end = _SESSION_END[proto]
    if end not in texts:
        return False
    return any(t.lower().startswith("rate:") for t in texts[texts.index(end) + 1 :])


def parse_session(proto: str, lines: list[str]) -> ZperfSession:
    texts = [clean(x) for x in lines]
    stripped = [t.strip() for t in texts]
    for t in stripped:
        if t in ("UDP session error.", "TCP session error."):
            raise DutError(f"zperf: {t}")
    end = _SESSION_END[proto]
    if end not in stripped:
        raise DutError(f"zperf: no `{end}` block")
    f = _fields(texts[stripped.index(end) + 1 :])

    def get(key: str) -> _Field:
        return _get(f, key, "session")

    d, r = get("duration"), get("rate")
    duration, mbps = duration_s(d.value, d.line), rate_mbps(r.value, r.line)
    if proto == "tcp":
        return ZperfSession("tcp", duration, mbps)
    j = get("jitter")
    return ZperfSession(
        "udp", duration, mbps, _count(get("received packets"), "packet count"),
        _count(get("nb packets lost"), "lost count"), _count(get("nb packets outorder"), "out-of-order count"),
        jitter_ms(j.value, j.line),
    )  # fmt: skip


def server_started(proto: str, line: str) -> bool:
    return clean(line).strip().startswith(f"{proto.upper()} server started on port")


def already_started(proto: str, line: str) -> bool:
    return clean(line).strip() == f"{proto.upper()} server already started!"


def server_stopped(proto: str, line: str) -> bool:
    return clean(line).strip() in (f"{proto.upper()} server stopped", f"{proto.upper()} server not running!")


# --- net ping ---------------------------------------------------------------------------------
# a reply whose numbers are not well formed (`time=0.1.2 ms`, a line cut short) is no reply: its request is
# lost. (?<!\d): searched from the first digit of a run only, not each (a long garbage line stays linear)
_PING_REPLY = re.compile(
    r"(?<!\d)(\d+) bytes from (\S+) to (\S+): icmp_seq=(\d+) ttl=(\d+) (?:rssi=-?\d+ )?time=(\d+(?:\.\d+)?) ms(?!\S)",
    re.ASCII,
)


@dataclass(frozen=True)
class NetPing:
    sent: int
    rtts_ms: tuple[float, ...]
    timeout: bool


def ping_finished(count: int, lines: list[str]) -> bool:
    """`net ping -c N`: the reply with icmp_seq N, `Ping timeout`, or an error ends it."""
    for line in lines:
        text = clean(line).strip()
        if text == "Ping timeout" or error_in(text):
            return True
        m = _PING_REPLY.search(text)
        if m and checked_int(m.group(4), COUNT, what="icmp_seq", line=text) >= count:
            return True
    return False


def parse_ping(count: int, lines: list[str]) -> NetPing:
    """Replies counted from their lines (net ping prints no summary); every request not answered
    is lost. A reply to a request never sent (icmp_seq above `count`) is a DutError."""
    rtts: dict[int, float] = {}
    timeout = False
    for line in lines:
        text = clean(line).strip()
        if (err := error_in(text)) is not None:
            raise DutError(f"net ping: {err}")
        if text == "Ping timeout":
            timeout = True
        if m := _PING_REPLY.search(text):
            seq = checked_int(m.group(4), COUNT, what="icmp_seq", line=text)
            require(1 <= seq <= count, f"a reply to request {seq} of {count}", text)
            rtts.setdefault(seq, checked(m.group(6), MS, what="time", line=text))
    return NetPing(count, tuple(rtts[k] for k in sorted(rtts)), timeout)
