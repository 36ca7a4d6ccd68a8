"""Parsers that cannot crash and cannot pass garbage (issue 27): every parser of a DUT's console
(the hil-fw protocol, Espressif's iperf example, Zephyr's zperf) and of a bench tool's output
(iperf 2 CSV, iperf 3 JSON, ping) driven with generated input and with real lines and transcripts
mutated (digits turned into `inf`, `nan`, `abc`, `1.2.3`, huge exponents, negatives, other
scripts' digits; lines cut short, dropped, doubled; random bytes). A parser may refuse its input
only with the suite's own error - DutError for a DUT's console, BenchError for a tool on the bench,
ConfigError for a bench or threshold file - and every number it does return is finite and in its
unit's plausible range (an `inf` Mbit/s would pass every `min_` limit).

Reproducible and time-boxed: every property runs derandomized (no example database) with a fixed
number of examples, 1,000 or more per parser and over 10,000 in all; the file runs in well under
a minute on a 2-core machine."""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hil import numbers
from hil.config.errors import ConfigError
from hil.config.thresholds import load_thresholds
from hil.console.dialects import espressif_format as esp
from hil.console.dialects import zperf_format as zp
from hil.console.dialects.espressif import iperf_options
from hil.console.dialects.text import clean
from hil.console.protocol import FinalLine, parse_final_line
from hil.dut.bench_file import load_bench
from hil.errors import BenchError, DutError
from hil.exit_codes import ExitCode, classify
from hil.paths import PROJECT_ROOT
from hil.tools import iperf2, iperf3, ping
from tests.support.transcripts import TRANSCRIPTS, transcript

pytestmark = pytest.mark.selftest

RUNS: Counter[str] = Counter()  # inputs each parser was given (test_every_parser_saw_its_inputs)
MIN_PER_PARSER = 1000  # with HIL_PROPERTY_SCALE below 1, proportionally fewer


SCALE = float(os.environ.get("HIL_PROPERTY_SCALE", "1"))  # e.g. 10 for a deeper (and 10 times longer) run


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=max(1, round(examples * SCALE)),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


# --- what a parser may do with garbage -------------------------------------------------------------
def survive(allowed: type[Exception], fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args), or None when it refused the input with the suite's `allowed` error (any other
    exception fails the property); the refusal must say something."""
    try:
        return fn(*args)
    except allowed as exc:
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        return None


def sane(value: float | None, low: float = 0.0, high: float = 1e15, what: str = "") -> None:
    """A number a parser returned: finite and in its unit's plausible range (None: not given)."""
    if value is None:
        return
    assert not isinstance(value, bool), f"{what}: a bool is no number"
    assert isinstance(value, int | float), f"{what}: {value!r} is no number"
    assert isinstance(value, int) or math.isfinite(value), f"{what}: {value!r} is not finite"
    assert low <= value <= high, f"{what}: {value!r} is outside {low:g}..{high:g}"


def sane_int(value: int | None, low: int = 0, high: float = 1e15, what: str = "") -> None:
    if value is None:
        return
    assert isinstance(value, int) and not isinstance(value, bool), f"{what}: {value!r} is not an integer"
    sane(value, low, high, what)


MBPS = (0.0, 1e5)
PCT = (0.0, 100.0)
MS = (0.0, 1e7)


# --- mutation of real lines -------------------------------------------------------------------------
GARBAGE = [
    "inf", "-inf", "Infinity", "nan", "NaN", "abc", "1.2.3", "0.1.2", "1e999", "1e308", "-1e999", "9e99", "-5",
    "-0.5", "-1", "", ".", "1.", ".5", "+1", "0x1f", "1_000", "\u0661\u0662", "\u0663.\u0665", "\uff11\uff12", "\u00b2",
    "99999999999999999999999", "9" * 40, "1" * 5000, "12abc", "1,5", " ", "\x00", "\ufffd", "-", "--1", "1-2", "1e5",
    "1E-3",
]  # fmt: skip
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
noise = st.one_of(
    st.text(max_size=40),
    st.binary(max_size=40).map(lambda b: b.decode("utf-8", errors="replace")),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)
WORST = ["inf", "nan", "-1", "abc", "1.2.3", "1e999", "99999999999999999999999", "-0.5", "\u0661\u0662"]
token = st.one_of(
    st.sampled_from(WORST), st.sampled_from(GARBAGE), st.text(alphabet="0123456789.-+eE ", max_size=12), noise
)


@st.composite
def mutated_line(draw: st.DrawFn, line: str, tokens: st.SearchStrategy[str] = token) -> str:
    """The line with one of its numbers turned into garbage, cut short, or noise put into it."""
    numbers = list(_NUMBER.finditer(line))
    how = draw(st.sampled_from(["number", "number", "number", "every", "cut", "insert", "replace", "keep"]))
    if how == "number" and numbers:
        m = draw(st.sampled_from(numbers))
        return line[: m.start()] + draw(tokens) + line[m.end() :]
    if how == "every":  # each number garbage of its own
        for m in reversed(numbers):
            line = line[: m.start()] + draw(tokens) + line[m.end() :]
        return line
    if how == "cut":
        return line[: draw(st.integers(0, len(line)))]
    if how == "insert":
        at = draw(st.integers(0, len(line)))
        return line[:at] + draw(noise) + line[at:]
    if how == "replace":
        return draw(noise)
    return line


@st.composite
def mutated(draw: st.DrawFn, lines: list[str], rounds: int = 3) -> list[str]:
    """Lines with 1..`rounds` mutations: a line changed (mutated_line), dropped, doubled, noise
    inserted, or the lines cut short."""
    out = list(lines)
    for _ in range(draw(st.integers(1, rounds))):
        how = draw(st.sampled_from(["line", "line", "line", "line", "drop", "double", "noise", "truncate"]))
        if not out:
            out.append(draw(noise))
            continue
        i = draw(st.integers(0, len(out) - 1))
        if how == "line":
            out[i] = draw(mutated_line(out[i]))
        elif how == "drop":
            del out[i]
        elif how == "double":
            out.insert(i, out[i])
        elif how == "noise":
            out.insert(i, draw(noise))
        else:
            out = out[: i + 1]
    return out


def transcripts(prefix: str) -> list[list[str]]:
    return [transcript(p.name) for p in sorted(TRANSCRIPTS.glob(f"{prefix}*.txt"))]


# --- the hil-fw console protocol --------------------------------------------------------------------
HIL_FW_FINALS = [
    "RESULT iperf role=server proto=tcp status=ok peer=10.77.0.1:40000 bytes=117440512 duration_us=10001234 "
    "mbps=93.941 len=1460",
    "RESULT iperf role=server proto=udp status=ok peer=10.77.0.1:40000 bytes=62500000 duration_us=10000321 "
    "mbps=49.998 len=1470 datagrams=42517 lost=3 loss_pct=0.0070 outoforder=0 jitter_ms=0.012",
    "RESULT iperf role=client proto=udp status=ok peer=10.77.0.9:5001 bytes=62500000 duration_us=10000100 mbps=50.000 "
    "len=1470 sent_datagrams=42517 target_mbps=50.000 send_errors=0 server_report=1 server_bytes=62495590 "
    "server_duration_us=10000400 server_mbps=49.994 server_datagrams=42517 server_lost=3 server_loss_pct=0.0070 "
    "server_outoforder=0 server_jitter_ms=0.010",
    "RESULT iperf action=abort stopped=2",
    "RESULT ping status=ok target=10.77.0.1 size=56 sent=2 received=1 loss_pct=50.0000 min_ms=0.722 avg_ms=0.722 "
    "max_ms=0.722 mdev_ms=0.000",
    "RESULT ping status=ok target=10.77.0.1 size=1440 sent=2000 received=1999 loss_pct=0.0500 min_ms=0.004 "
    "avg_ms=0.037 max_ms=0.722 mdev_ms=0.021",
    "RESULT wifi status=connected source=console ssid_hex=6170 bssid=aa:bb:cc:dd:ee:ff channel=6 rssi=-47 "
    "auth=wpa2 phy=11n ip=192.168.1.79",
    "RESULT stats link_xmit=10 link_recv=12 tcp_drop=0 heap_avail=16000 heap_used=1200 port0_rx=5",
    "RESULT stream status=ok streams=3 duration_us=60000000",
    "RESULT linkdelay delay_ms=20 held=0",
    "BOOT name=hil-fw version=v1.2 target=host variant=default tcp_wnd=5840 tcp_mss=1460 ip=10.77.0.2",
    "ERR iperf bad port 0 (1-65535)",
]
PING_REPLIES = [
    "PING 10.77.0.1: 56 data bytes",
    "64 bytes from 10.77.0.1: icmp_seq=1 ttl=64 time=0.722 ms",
    "Request timeout for icmp_seq=2",
    "64 bytes from 10.77.0.1: icmp_seq=3 ttl=64 time=1.005 ms",
]


def check_fields(final: FinalLine) -> None:
    """Every field read as a number: DutError, or a number in its key's range."""
    for key in final.fields:
        low, high = (-150.0, 30.0) if key == "rssi" else PCT if key.endswith("_pct") else (0.0, 1e15)
        if key == "mbps" or key.endswith("_mbps"):
            high = MBPS[1]
        sane(survive(DutError, final.get_float, key), low, high, key)
        sane_int(survive(DutError, final.get_int, key), int(low), high, key)


def read_final(line: str) -> FinalLine | None:
    final = survive(DutError, parse_final_line, line)
    if final is not None:
        check_fields(final)
    return final


number_text = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=True, allow_infinity=True).map(lambda f: f"{f:.3f}"),
    st.sampled_from(GARBAGE),
    st.text(alphabet="0123456789.-+eEinfa", min_size=1, max_size=10),
)
KEYS = ["mbps", "bytes", "duration_us", "lost", "datagrams", "loss_pct", "jitter_ms", "sent", "received", "avg_ms",
        "min_ms", "max_ms", "mdev_ms", "rssi", "channel", "server_mbps", "server_lost", "port0_rx", "len"]  # fmt: skip


@fuzz(1500)
@given(
    kind=st.sampled_from(["RESULT", "BOOT", "ERR", "RESULT", "RESULT"]),
    command=st.sampled_from(["iperf", "ping", "wifi", "stats", "version", ""]),
    pairs=st.lists(st.tuples(st.sampled_from(KEYS), number_text), max_size=8),
    tail=st.one_of(st.just(""), noise),
)
def test_hil_fw_generated_final_lines(kind: str, command: str, pairs: list[tuple[str, str]], tail: str) -> None:
    RUNS["hil-fw final line"] += 1
    body = " ".join(f"{k}={v}" for k, v in pairs)
    read_final(f"{kind} {command} {body}{tail}")


@fuzz(1500)
@given(line=st.sampled_from(HIL_FW_FINALS).flatmap(mutated_line))
def test_hil_fw_mutated_final_lines(line: str) -> None:
    RUNS["hil-fw final line"] += 1
    read_final(line)
    read_final(line + "\r")


def check_ping(stats: ping.PingStats | None) -> None:
    if stats is None:
        return
    sane_int(stats.sent, what="sent")
    sane_int(stats.received, what="received")
    assert stats.received <= stats.sent, f"{stats.received} received of {stats.sent} sent"
    sane(stats.loss_pct, *PCT, what="loss_pct")
    for rtt in stats.rtts_ms:
        sane(rtt, *MS, what="rtt")
    for v in (stats.avg_ms, stats.min_ms, stats.max_ms, stats.mdev_ms):
        sane(v, *MS, what="summary")


@st.composite
def hil_fw_ping_generated(draw: st.DrawFn) -> tuple[list[str], str]:
    def n() -> str:
        return draw(number_text)

    lines = [f"64 bytes from 10.77.0.1: icmp_seq={n()} ttl={n()} time={n()} ms" for _ in range(draw(st.integers(0, 3)))]
    final = (f"RESULT ping status=ok target=10.77.0.1 size={n()} sent={n()} received={n()} loss_pct={n()} "
             f"min_ms={n()} avg_ms={n()} max_ms={n()} mdev_ms={n()}")  # fmt: skip
    return lines, final


@fuzz(1000)
@given(
    case=st.one_of(
        st.tuples(mutated(PING_REPLIES), st.sampled_from(HIL_FW_FINALS[4:6]).flatmap(mutated_line)),
        hil_fw_ping_generated(),
    )
)
def test_hil_fw_console_ping(case: tuple[list[str], str]) -> None:
    lines, final = case
    RUNS["hil-fw console ping"] += 1
    parsed = survive(DutError, parse_final_line, final)
    if parsed is not None:
        check_ping(survive(DutError, ping.parse_console, lines, parsed))


# --- ping on the bench (iputils) --------------------------------------------------------------------
IPUTILS = """PING 10.77.0.2 (10.77.0.2) 56(84) bytes of data.
64 bytes from 10.77.0.2: icmp_seq=1 ttl=255 time=0.091 ms
64 bytes from 10.77.0.2: icmp_seq=2 ttl=255 time=0.120 ms

--- 10.77.0.2 ping statistics ---
3 packets transmitted, 2 received, 33.3333% packet loss, time 401ms
rtt min/avg/max/mdev = 0.091/0.105/0.120/0.014 ms""".splitlines()
FLOOD = """--- 10.77.0.2 ping statistics ---
79582 packets transmitted, 79581 received, 0.00125659% packet loss, time 60000ms
rtt min/avg/max/mdev = 0.050/0.707/2.100/0.100 ms, ipg/ewma 0.754/0.701 ms""".splitlines()


@st.composite
def iputils_generated(draw: st.DrawFn) -> list[str]:
    def n() -> str:
        return draw(number_text)

    lines = ["PING 10.77.0.2 (10.77.0.2) 56(84) bytes of data."]
    lines += [f"64 bytes from 10.77.0.2: icmp_seq={n()} ttl=255 time={n()} ms" for _ in range(draw(st.integers(0, 3)))]
    lines.append(f"{n()} packets transmitted, {n()} received, {n()}% packet loss, time {n()}ms")
    if draw(st.booleans()):
        lines.append(f"rtt min/avg/max/mdev = {n()}/{n()}/{n()}/{n()} ms")
    return lines


@fuzz(1000)
@given(lines=st.one_of(st.sampled_from([IPUTILS, FLOOD]).flatmap(mutated), iputils_generated()))
def test_iputils_ping(lines: list[str]) -> None:
    RUNS["iputils ping"] += 1
    check_ping(survive(BenchError, ping.parse_iputils, "\n".join(lines) + "\n"))


# --- iperf 2 CSV on the bench -----------------------------------------------------------------------
IPERF2_CSV = [
    "19700101000000,10.77.0.1,35038,10.77.0.2,5001,1,0.0-3.0,423362620,1127016121",
    "19700101000000,10.77.0.1,35569,10.77.0.2,5001,1,0.0-1.0,26214400,209715200,0.010,0,17832,0.000,0",
    "19700101000000,10.77.0.2,53357,10.77.0.1,5001,1,0.0-3.0,39322500,104866746,0.005,3,26750,0.011,1",
    "19700101000000,127.0.0.1,35191,127.0.0.1,5001,1,0.0-1.0,1255380,10022443,0.000,0,-1,-0.000,0",
    "WARNING: did not receive ack of last datagram after 10 tries.",
]


def check_iperf2(rec: iperf2.Iperf2Record | None) -> None:
    if rec is None:
        return
    sane(rec.interval_start_s, 0, 1e7, "start")
    sane(rec.interval_end_s, 0, 1e7, "end")
    assert rec.interval_end_s >= rec.interval_start_s, "an interval that ends before it starts"
    sane_int(rec.bytes, what="bytes")
    sane(rec.mbps, *MBPS, what="mbps")
    sane(rec.jitter_ms, *MS, what="jitter")
    sane_int(rec.lost, what="lost")
    sane_int(rec.out_of_order, what="out_of_order")
    if rec.total is not None and rec.total != -1:  # -1: a UDP client's own record (no server view)
        sane_int(rec.total, what="total")
        assert rec.lost is not None and rec.lost <= rec.total, "more lost than sent"
    sane(rec.loss_pct, *PCT, what="loss_pct")


@st.composite
def iperf2_generated(draw: st.DrawFn) -> list[str]:
    def n() -> str:
        return draw(number_text)

    lines = []
    for _ in range(draw(st.integers(1, 3))):
        fields = ["19700101000000", "10.77.0.1", n(), "10.77.0.2", "5001", n(), f"{n()}-{n()}", n(), n()]
        if draw(st.booleans()):
            fields += [n(), n(), n(), n(), n()]
        lines.append(",".join(fields))
    return lines


@fuzz(1000)
@given(
    lines=st.one_of(st.lists(st.sampled_from(IPERF2_CSV), min_size=1, max_size=4).flatmap(mutated), iperf2_generated())
)
def test_iperf2_csv(lines: list[str]) -> None:
    RUNS["iperf 2 CSV"] += 1
    text = "\n".join(lines) + "\n"
    for rec in survive(BenchError, iperf2.parse_csv_records, text) or []:
        check_iperf2(rec)
    check_iperf2(survive(BenchError, iperf2.summary_record, text))


# --- iperf 3 JSON on the bench ----------------------------------------------------------------------
def _direction(mbps: float, lost: int) -> dict[str, Any]:
    return {"seconds": 2.0, "bytes": 25_000_000, "bits_per_second": mbps * 1e6, "lost_packets": lost,
            "packets": 1000, "lost_percent": lost / 10, "jitter_ms": 0.1}  # fmt: skip


IPERF3_DOCS: list[dict[str, Any]] = [
    {"start": {"test_start": {"protocol": "TCP"}}, "end": {
        "sum_sent": {"seconds": 1.0, "bytes": 10485760, "bits_per_second": 95e6, "retransmits": 2},
        "sum_received": {"seconds": 1.0, "bytes": 10444424, "bits_per_second": 94e6}}},
    {"start": {"test_start": {"protocol": "UDP"}}, "end": {"sum": {"seconds": 2.0, "bits_per_second": 50e6,
        "jitter_ms": 0.01, "lost_packets": 3, "packets": 1000, "lost_percent": 0.3}}},
    {"start": {"test_start": {"protocol": "UDP"}}, "end": {
        "sum_sent": _direction(90, 0), "sum_received": _direction(89, 14), "sum": _direction(89, 14),
        "sum_sent_bidir_reverse": _direction(80, 0), "sum_received_bidir_reverse": _direction(79, 3),
        "sum_bidir_reverse": _direction(79, 3)}},
    {"error": "unable to connect to server: Connection refused"},
]  # fmt: skip
JSON_GARBAGE = st.one_of(
    st.sampled_from([math.inf, -math.inf, math.nan, -1, -0.5, 10**400, 1e300, "abc", "94e6", True, None, [], {}]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**20), 10**20),
    st.text(max_size=8),
)


def _paths(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in a JSON document."""
    out = [at]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*at, k))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    return {**doc, path[0]: _set(doc[path[0]], path[1:], value)}


def _drop(doc: Any, path: tuple[Any, ...]) -> Any:
    if len(path) == 1:
        return {k: v for k, v in doc.items() if k != path[0]}
    return {**doc, path[0]: _drop(doc[path[0]], path[1:])}


@st.composite
def iperf3_doc(draw: st.DrawFn) -> Any:
    doc = draw(st.sampled_from(IPERF3_DOCS))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        doc = _drop(doc, path) if path and draw(st.booleans()) else _set(doc, path, draw(JSON_GARBAGE))
    return doc


def check_iperf3(r: iperf3.Iperf3Result | None) -> None:
    if r is None:
        return
    sane(r.sender_mbps, *MBPS, what="sender_mbps")
    sane(r.receiver_mbps, *MBPS, what="receiver_mbps")
    sane(r.duration_s, 0, 1e7, "duration_s")
    sane(r.jitter_ms, *MS, what="jitter_ms")
    sane(r.lost_percent, *PCT, what="lost_percent")
    for what in ("retransmits", "lost_packets", "packets", "bytes", "sent_bytes"):
        sane_int(getattr(r, what), what=what)
    if r.lost_packets is not None and r.packets is not None:
        assert r.lost_packets <= r.packets, "more lost than sent"


def read_iperf3(text: str) -> None:
    check_iperf3(survive(BenchError, iperf3.parse_json, text))
    for r in survive(BenchError, iperf3.parse_bidir_json, text) or ():
        check_iperf3(r)


@fuzz(1000)
@given(doc=iperf3_doc())
def test_iperf3_json_values(doc: Any) -> None:
    RUNS["iperf 3 JSON"] += 1
    read_iperf3(json.dumps(doc))  # json.dumps writes inf / nan as Infinity / NaN, which json.loads takes


@fuzz(500)
@given(lines=st.sampled_from(IPERF3_DOCS).map(lambda d: json.dumps(d, indent="\t").splitlines()).flatmap(mutated))
def test_iperf3_json_text(lines: list[str]) -> None:
    RUNS["iperf 3 JSON"] += 1
    read_iperf3("\n".join(lines))


# --- Espressif's iperf example ----------------------------------------------------------------------
ESP_IPERF = transcripts("espressif-v4") + transcripts("iperf-cmd")
ESP_OTHER_FILES = ["espressif-ping.txt", "espressif-ping-unknown-host.txt", "espressif-system.txt",
                   "espressif-v4-scan.txt", "espressif-v4-help.txt", "iperf-cmd-1.0-help.txt"]  # fmt: skip
ESP_OTHER = [transcript(n) for n in ESP_OTHER_FILES]


def check_interval(iv: esp.Interval | None) -> None:
    if iv is None:
        return
    sane_int(iv.start_s, 0, 1e7, "start_s")
    sane_int(iv.end_s, 0, 1e7, "end_s")
    assert iv.end_s >= iv.start_s, "an interval that ends before it starts"
    sane(iv.mbps, *MBPS, what="mbps")
    sane_int(iv.transfer_bytes, what="transfer_bytes")


def _esp_report(lines: list[str], binary: bool) -> None:
    rep = esp.read_report(lines, binary)
    for iv in [*rep.intervals, rep.summary]:
        check_interval(iv)
    sane(survive(DutError, lambda: rep.mbps), *MBPS, what="mbps")
    sane(rep.seconds, 0, 1e7, "seconds")
    sane_int(survive(DutError, lambda: rep.transfer_bytes), what="transfer_bytes")
    esp.run_finished(lines)
    esp.layout_of(lines)
    esp.abort_finished(lines)
    for line in lines:
        check_interval(esp.parse_interval(line, binary))
        esp.error_in(line)
        esp.server_ready(line)


@st.composite
def esp_generated_report(draw: st.DrawFn) -> list[str]:
    def n() -> str:
        return draw(number_text)

    def prefix() -> str:
        return draw(st.sampled_from(["", "K", "M", "G"]))

    layouts = [
        lambda: f"{n():>4}-{n():>4} sec       {n()} {prefix()}bits/sec",
        lambda: f"{n():>2}.0-{n():>2}.0 sec  {n()} {prefix()}bits/sec",
        lambda: f"[{n():>3}] {n():>2}.0-{n():>2}.0 sec\t{n()} {prefix()}Bytes\t{n()} {prefix()}bits/sec",
    ]
    layout = draw(st.sampled_from(layouts))
    lines = ["I (100) iperf: Socket created", "        Interval Bandwidth"]
    lines += [layout() for _ in range(draw(st.integers(1, 4)))]
    return [*lines, "I (9000) iperf: iperf exit"]


@fuzz(1500)
@given(
    lines=st.one_of(st.sampled_from(ESP_IPERF).flatmap(lambda t: mutated(t, 4)), esp_generated_report()),
    binary=st.booleans(),
)
def test_espressif_iperf_reports(lines: list[str], binary: bool) -> None:
    RUNS["espressif iperf report"] += 1
    survive(DutError, _esp_report, lines, binary)


def _esp_other(lines: list[str]) -> None:
    if esp.ping_finished(lines):
        p = survive(DutError, esp.parse_ping, lines)
        if p is not None:
            sane_int(p.sent, what="sent")
            sane_int(p.received, what="received")
            assert p.received <= p.sent, "more received than sent"
            sane_int(p.loss_pct_printed, 0, 100, "loss_pct_printed")
            for rtt in p.rtts_ms:
                sane(rtt, *MS, what="rtt")
    sane_int(esp.free_heap(lines), what="free heap")
    sane_int(esp.min_free_heap(lines), what="min free heap")
    sane_int(esp.scan_rssi(lines, "aptest"), -150, 30, "rssi")
    esp.idf_version(lines)
    esp.v4_layout_is_binary(esp.idf_version(lines))
    esp.commands_in_help(lines)
    iperf_options(lines)
    esp.sta_ip(lines)
    esp.join_gave_up(lines)
    esp.join_last_reason(lines)


@st.composite
def esp_generated_other(draw: st.DrawFn) -> list[str]:
    def n() -> str:
        return draw(number_text)

    lines = [
        f"64 bytes from 192.168.10.42 icmp_seq={n()} ttl={n()} time={n()} ms" for _ in range(draw(st.integers(0, 3)))
    ]
    lines.append(f"{n()} packets transmitted, {n()} received, {n()}% packet loss, time {n()}ms")
    lines += [
        n(),
        f"min heap size: {n()}",
        f"[aptest][rssi={n()}]",
        f"I (1) esp_netif_handlers: sta ip: {n()}, mask: x, gw: y",
    ]
    return lines


@fuzz(1000)
@given(lines=st.one_of(st.sampled_from(ESP_OTHER).flatmap(mutated), esp_generated_other()))
def test_espressif_ping_system_and_help(lines: list[str]) -> None:
    RUNS["espressif ping, system, help"] += 1
    survive(DutError, _esp_other, lines)


# --- Zephyr's zperf ---------------------------------------------------------------------------------
ZPERF = [("udp" if "udp" in p.name else "tcp", transcript(p.name)) for p in sorted(TRANSCRIPTS.glob("zperf-*.txt"))]


def _zperf(proto: str, lines: list[str]) -> None:
    zp.upload_finished(lines)
    zp.session_finished(proto, lines)
    sane_int(zp.size_capped(lines), what="size capped")
    for line in lines:
        zp.error_in(line)
        zp.server_started(proto, line)
        zp.server_stopped(proto, line)
    if any("Upload completed!" in clean(x) for x in lines):
        up = survive(DutError, zp.parse_upload, proto, lines)
        if up is not None:
            for v in (up.client_duration_s, up.server_duration_s):
                sane(v, 0, 1e7, "duration")
            for v in (up.client_mbps, up.server_mbps):
                sane(v, *MBPS, what="mbps")
            for name in ("packets_sent", "packets_received", "lost", "outoforder", "errors"):
                sane_int(getattr(up, name), what=name)
            sane(up.jitter_ms, *MS, what="jitter")
    if any(end in clean(x) for x in lines for end in ("End of session!", "TCP session ended")):
        s = survive(DutError, zp.parse_session, proto, lines)
        if s is not None:
            sane(s.duration_s, 0, 1e7, "duration")
            sane(s.mbps, *MBPS, what="mbps")
            for name in ("packets", "lost", "outoforder"):
                sane_int(getattr(s, name), what=name)
            sane(s.jitter_ms, *MS, what="jitter")


@st.composite
def zperf_generated(draw: st.DrawFn) -> tuple[str, list[str]]:
    def n() -> str:
        return draw(number_text)

    def d() -> str:
        return f"{n()} {draw(st.sampled_from(['s', 'ms', 'us', 'm', 'Mbps']))}"

    def r() -> str:
        return f"{n()} {draw(st.sampled_from(['Mbps', 'Kbps', 'Gbps', 's']))}"

    blocks = {  # drawn only for the block chosen
        ("tcp", "upload"): lambda: ["Upload completed!", f"Duration:\t{d()}", f"Num packets:\t{n()}",
                                    f"Num errors:\t{n()} (retry or fail)", f"Rate:\t\t{r()}"],
        ("udp", "upload"): lambda: ["Upload completed!", "Statistics:\t\tserver\t(client)",
                                    f"Duration:\t\t{d()}\t({d()})", f"Num packets:\t\t{n()}\t({n()})",
                                    f"Num packets out order:\t{n()}", f"Num packets lost:\t{n()}",
                                    f"Jitter:\t\t\t{d()}", f"Rate:\t\t\t{r()}\t({r()})"],
        ("udp", "download"): lambda: ["End of session!", f" duration:\t\t{d()}", f" received packets:\t{n()}",
                                      f" nb packets lost:\t{n()}", f" nb packets outorder:\t{n()}",
                                      f" jitter:\t\t\t{d()}", f" rate:\t\t\t{r()}"],
        ("tcp", "download"): lambda: ["TCP session ended", f" Duration:\t\t{d()}", f" rate:\t\t\t{r()}"],
    }  # fmt: skip
    proto, _ = key = draw(st.sampled_from(sorted(blocks)))
    return proto, blocks[key]()


@fuzz(1500)
@given(
    case=st.one_of(
        st.sampled_from(ZPERF).flatmap(lambda c: st.tuples(st.just(c[0]), mutated(c[1], 4))), zperf_generated()
    )
)
def test_zperf_upload_and_download(case: tuple[str, list[str]]) -> None:
    RUNS["zperf upload/download"] += 1
    survive(DutError, _zperf, *case)


ZEPHYR_PING = [transcript("zephyr-net-ping.txt"), transcript("zephyr-net-ping-timeout.txt")]


def _net_ping(count: int, lines: list[str]) -> None:
    zp.ping_finished(count, lines)
    p = zp.parse_ping(count, lines)
    assert p.sent == count
    assert len(p.rtts_ms) <= count, f"{len(p.rtts_ms)} replies to {count} requests"
    for rtt in p.rtts_ms:
        sane(rtt, *MS, what="rtt")


@st.composite
def net_ping_generated(draw: st.DrawFn) -> list[str]:
    def n() -> str:
        return draw(number_text)

    lines = ["PING 192.0.2.2"]
    lines += [f"8 bytes from 192.0.2.2 to 192.0.2.1: icmp_seq={n()} ttl={n()} time={n()} ms"
              for _ in range(draw(st.integers(0, 4)))]  # fmt: skip
    return lines


@fuzz(1000)
@given(lines=st.one_of(st.sampled_from(ZEPHYR_PING).flatmap(mutated), net_ping_generated()), count=st.integers(1, 5))
def test_zephyr_net_ping(lines: list[str], count: int) -> None:
    RUNS["zephyr net ping"] += 1
    survive(DutError, _net_ping, count, lines)


@fuzz(1000)
@given(number=number_text, unit=st.sampled_from(["Mbps", "Kbps", "m", "s", "ms", "us", "Gbps", ""]),
       space=st.sampled_from(["", " ", "\t"]))  # fmt: skip
def test_zperf_numbers(number: str, unit: str, space: str) -> None:
    RUNS["zperf numbers"] += 1
    sane(survive(DutError, zp.rate_mbps, f"{number}{space}{unit}"), *MBPS, what="rate")
    sane(survive(DutError, zp.duration_s, f"{number}{space}{unit}"), 0, 1e7, "duration")


# --- the bench and threshold files ------------------------------------------------------------------
# the project's bench and threshold files without their comment lines (they cost parsing time, not coverage)
YAML_FILES = {
    kind: [[x for x in p.read_text().splitlines() if not x.lstrip().startswith("#")]
           for p in sorted((PROJECT_ROOT / kind).glob("*.yaml"))]
    for kind in ("bench", "thresholds")
}  # fmt: skip
YAML_GARBAGE = [
    ".inf",
    "-.inf",
    ".nan",
    "inf",
    "nan",
    "-1",
    "1e999",
    "abc",
    "~",
    "[]",
    "{}",
    "!!binary aGk=",
    "&a",
    "*a",
    "'",
    '"',
    "\t",
    "1.2.3",
    "0x10",
    "0o7",
    "2001-01-01",
    "yes",
    "<<: 1",
    "99999999999999999999999",
]
# not the 5000-digit number (an exact example: KNOWN_CONFIG_CRASHES)
yaml_token = token.filter(lambda t: len(t) < 4000)
_YAML_SCALAR = re.compile(r"(?<=: )[^\s#{}\[\],]+")


@st.composite
def yaml_text(draw: st.DrawFn, files: str) -> bytes:
    lines = list(draw(st.sampled_from(YAML_FILES[files])))
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        scalars = list(_YAML_SCALAR.finditer(lines[i]))
        how = draw(st.sampled_from(["scalar", "scalar", "scalar", "line", "drop", "cut"]))
        if how == "scalar" and scalars:
            m = draw(st.sampled_from(scalars))
            lines[i] = (
                lines[i][: m.start()] + draw(st.one_of(st.sampled_from(YAML_GARBAGE), yaml_token)) + lines[i][m.end() :]
            )
        elif how == "line":
            lines[i] = draw(mutated_line(lines[i], yaml_token))
        elif how == "drop":
            del lines[i]
        else:
            lines = lines[: i + 1]
    return "\n".join(lines).encode()  # valid UTF-8 only (a file that is not: KNOWN_CONFIG_CRASHES)


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where each generated bench or threshold file is written (module-scoped: Hypothesis runs
    every example of a test in one call)."""
    return tmp_path_factory.mktemp("config") / "file.yaml"


def _load(path: Path, loader: Callable[[Path], object], data: bytes) -> None:
    path.write_bytes(data)
    loader(path)


@fuzz(1000)
@given(data=yaml_text("bench"))
def test_bench_file_loader(config_file: Path, data: bytes) -> None:
    RUNS["bench file"] += 1
    survive(ConfigError, _load, config_file, load_bench, data)


@fuzz(1000)
@given(data=yaml_text("thresholds"))
def test_threshold_file_loader(config_file: Path, data: bytes) -> None:
    RUNS["threshold file"] += 1
    survive(ConfigError, _load, config_file, load_thresholds, data)


# Crashes the properties above found in hil/config/errors.py's read_yaml (a traceback, exit 3, where
# a ConfigError, exit 4, naming the file belongs), fixed there; kept here as exact examples (the
# generated text above is UTF-8 and its numbers shorter, to keep the properties fast).
KNOWN_CONFIG_CRASHES = {
    "not UTF-8": b"\x80name: bench\n",  # UnicodeDecodeError from path.read_text()
    "a 5000-digit number": b"name: " + b"1" * 5000 + b"\n",  # ValueError from YAML's int() (Python's 4300-digit limit)
}


@pytest.mark.parametrize("data", KNOWN_CONFIG_CRASHES.values(), ids=KNOWN_CONFIG_CRASHES.keys())
@pytest.mark.parametrize("loader", [load_bench, load_thresholds], ids=["bench", "thresholds"])
def test_known_config_loader_crashes(config_file: Path, loader: Callable[[Path], object], data: bytes) -> None:
    survive(ConfigError, _load, config_file, loader, data)


def test_every_parser_saw_its_inputs() -> None:
    """Each parser whose property ran in this session was given 1,000 inputs or more."""
    ran = {name: n for name, n in RUNS.items() if n}
    short = {name: n for name, n in ran.items() if n < MIN_PER_PARSER * min(1.0, SCALE)}
    assert not short, f"parsers given fewer than {MIN_PER_PARSER} inputs: {short}"
    print(f"inputs per parser: {dict(sorted(ran.items()))}; {sum(ran.values())} in all")


# --- the exact examples of issue 27 -----------------------------------------------------------------
IPERF_RESULT = (
    "RESULT iperf role=server proto=tcp status=ok peer=10.77.0.1:40000 bytes=1000 duration_us=1000000 mbps={}"
)


def test_mbps_abc_is_a_dut_error_naming_the_line() -> None:
    line = IPERF_RESULT.format("abc")
    final = parse_final_line(line)
    assert final is not None
    with pytest.raises(DutError) as caught:
        final.get_float("mbps")
    assert "mbps='abc' (not a number)" in str(caught.value) and repr(line) in str(caught.value)
    assert classify(caught.value) == ExitCode.DUT_FAILED  # exit 1, not 3 "suite error"


@pytest.mark.parametrize(
    ("value", "reason"),
    [("inf", "not a number"), ("nan", "not a number"), ("-1", "below 0 Mbit/s"), ("1e3", "not a number"),
     ("100001", "above 100000 Mbit/s"), ("1.2.3", "not a number"), ("\u0661\u0662", "not a number"),
     ("9" * 30, "too long")],
)  # fmt: skip
def test_non_finite_negative_or_implausible_mbps_is_a_dut_error(value: str, reason: str) -> None:
    final = parse_final_line(IPERF_RESULT.format(value))
    assert final is not None
    with pytest.raises(DutError, match=re.escape(reason)):
        final.get_float("mbps")


def test_plausible_numbers_pass_in_their_units() -> None:
    final = parse_final_line(IPERF_RESULT.format("100000") + " jitter_ms=0.012 loss_pct=100.0000")
    assert final is not None
    assert final.get_float("mbps") == 100_000 and final.get_int("duration_us") == 1_000_000
    assert final.get_float("jitter_ms") == 0.012 and final.get_float("loss_pct") == 100.0
    with pytest.raises(DutError, match=r"bytes='1000.5' \(not a whole number\)"):
        FinalLine("RESULT", "iperf", {"bytes": "1000.5"}).get_int("bytes")  # a line the suite made: rebuilt
    wifi = parse_final_line("RESULT wifi status=connected channel=6 rssi=-47")
    assert wifi is not None and wifi.get_int("rssi") == -47 and wifi.get_int("channel") == 6  # dBm may be negative


def test_a_malformed_reply_time_is_no_number() -> None:
    """`time=0.1.2 ms` never reaches float(): the hil-fw console's is a DutError naming the line,
    iputils' a bench fault; Espressif's and Zephyr's ping do not take the line for a reply (the
    request counts as unanswered: ESP's statistics line counts, Zephyr's request is lost)."""
    bad = "64 bytes from 10.77.0.1: icmp_seq=1 ttl=64 time=0.1.2 ms"
    final = parse_final_line(HIL_FW_FINALS[4])
    assert final is not None
    with pytest.raises(DutError, match=re.escape(repr(bad))):
        ping.parse_console([bad], final)
    with pytest.raises(BenchError, match=re.escape(repr(bad))) as caught:
        ping.parse_iputils("\n".join([IPUTILS[0], bad, *IPUTILS[2:]]))
    assert classify(caught.value) == ExitCode.BENCH_FAULT
    esp_lines = transcript("espressif-ping.txt")
    esp_lines[1] = esp_lines[1].replace("time=36 ms", "time=0.1.2 ms")
    p = esp.parse_ping(esp_lines)
    assert p.rtts_ms == (34.0, 33.0, 33.0) and (p.sent, p.received) == (5, 4)
    zephyr = transcript("zephyr-net-ping.txt")
    zephyr[2] = zephyr[2].replace("time=0.52 ms", "time=0.1.2 ms")
    assert zp.parse_ping(4, zephyr).rtts_ms == (0.48, 0.61)


def test_tool_output_with_a_malformed_number_is_a_bench_fault() -> None:
    with pytest.raises(BenchError, match=r"bits_per_second='inf' \(not a number\) in '19700101000000,"):
        iperf2.parse_csv_records(IPERF2_CSV[0].replace("1127016121", "inf"))
    doc = json.dumps({"end": {"sum_sent": {"seconds": 1.0, "bits_per_second": math.nan},
                              "sum_received": {"seconds": 1.0, "bits_per_second": 94e6}}})  # fmt: skip
    with pytest.raises(BenchError, match=r"end\.sum_sent\.bits_per_second=nan \(not finite\)") as caught:
        iperf3.parse_json(doc)
    assert classify(caught.value) == ExitCode.BENCH_FAULT
    with pytest.raises(BenchError, match="not an object"):
        iperf3.parse_json("[1, 2]")


def test_checked_conversion() -> None:
    assert numbers.checked("94.5", numbers.MBPS, what="mbps") == 94.5
    assert numbers.checked(94_000_000, numbers.MBPS, what="bps", scale=1e-6) == 94.0  # a JSON int
    assert numbers.checked_int("-47", numbers.DBM, what="rssi") == -47
    assert numbers.checked_int(12.0, numbers.COUNT, what="n", source=numbers.IPERF3_TOOL) == 12
    for bad in ("+1", "1e5", ".5", "1.", "1_000", "0x1f", " ", "", "\uff11", True, None, [1], math.inf, 10**400):
        with pytest.raises(DutError):
            numbers.checked(bad, numbers.MBPS, what="x", line="RESULT x")
    with pytest.raises(numbers.ToolOutputError, match="not a whole number"):
        numbers.checked_int("1.5", numbers.COUNT, what="lost", source=numbers.IPERF2_TOOL)
    with pytest.raises(DutError, match="impossible numbers: 2 received of 1 sent in 'RESULT ping'"):
        numbers.require(False, "2 received of 1 sent", "RESULT ping")
