"""Checked numbers: the one conversion every number read from a DUT's console or from a bench
tool's output (iperf 2, iperf 3, ping) goes through.

A number is accepted only when it is well formed (ASCII decimal digits, at most one decimal point,
an optional leading minus; no exponent, no `inf` / `nan`, no digit grouping, no other script's
digits), finite, and in the plausible range of its unit: a garbage reply must not reach a limit
(an `inf` Mbit/s would pass every `min_` limit, a negative loss every `max_` one). Whose fault a
rejected number is decides the error:

- a DUT's console (its replies, its iperf's or ping's lines): `DutError` (exit 1, the DUT answered
  garbage), quoting the line;
- a tool on the bench (iperf 2 / iperf 3 / ping run on the PC or the peer host): `ToolOutputError`,
  a `BenchError` (exit 75, the bench failed; the DUT was not judged).

Usage: ``checked(text, MBPS, what="mbps", line=line)`` (DUT) or
``checked_int(text, COUNT, what="lost", line=line, source=IPERF2_TOOL)`` (a bench tool).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from hil.errors import BenchError, DutError


class ToolOutputError(BenchError, ValueError):
    """A tool on the bench PC (iperf, ping) printed output the suite cannot read (no result, a
    malformed or implausible number). A bench fault, not the DUT's: the DUT was not judged. Also a
    ValueError, so callers that add their own context to a tool's unreadable output keep doing so."""


@dataclass(frozen=True)
class Unit:
    """A unit and the range a plausible value of it lies in (both ends included)."""

    name: str
    low: float
    high: float

    def show(self, value: float) -> str:
        return f"{value:g} {self.name}"


MBPS = Unit("Mbit/s", 0.0, 100_000.0)  # 100 Gbit/s: above any link a bench drives
BITS_PER_S = Unit("bit/s", 0.0, 100e9)
PERCENT = Unit("%", 0.0, 100.0)
MS = Unit("ms", 0.0, 1e7)  # about 2.8 hours
US = Unit("us", 0.0, 1e13)  # about 116 days: a test's duration or a round trip in microseconds
SECONDS = Unit("s", 0.0, 1e7)  # about 116 days
COUNT = Unit("count", 0.0, 1e12)  # packets, datagrams, errors, sequence numbers, commands
BYTES = Unit("bytes", 0.0, 1e15)  # 1 PB: a day at 10 Gbit/s is 1.1e14
DBM = Unit("dBm", -150.0, 30.0)  # a received signal strength


@dataclass(frozen=True)
class Source:
    """Who printed the number, as an error message names it, and the error a bad one raises."""

    who: str
    error: type[Exception]


DUT = Source("the DUT", DutError)
IPERF2_TOOL = Source("iperf 2 on the bench", ToolOutputError)
IPERF3_TOOL = Source("iperf3 on the bench", ToolOutputError)
PING_TOOL = Source("ping on the bench", ToolOutputError)

MAX_CHARS = 24  # more characters than any plausible number has (also keeps int() of a huge string away)
QUOTE_CHARS = 200  # how much of the offending line an error quotes

_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_INTEGER = re.compile(r"-?[0-9]+")


def quote(line: str) -> str:
    """The offending line as an error message quotes it (repr, cut to QUOTE_CHARS)."""
    return repr(line if len(line) <= QUOTE_CHARS else line[:QUOTE_CHARS] + "...")


def _reject(value: object, reason: str, what: str, line: str, source: Source) -> Exception:
    shown = repr(value)
    if len(shown) > MAX_CHARS + 2:
        shown = shown[: MAX_CHARS + 2] + "..."
    where = f" in {quote(line)}" if line else ""
    return source.error(f"{source.who} printed a malformed number: {what}={shown} ({reason}){where}")


def _parse(value: object, integer: bool, what: str, line: str, source: Source) -> float | int:
    """`value` as a number: a string of the strict grammar, or an int / float (parsed JSON)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _reject(value, "not a number", what, line, source)
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_CHARS:
            raise _reject(value, "too long to be a number", what, line, source)
        if integer and _DECIMAL.fullmatch(text) and not _INTEGER.fullmatch(text):
            raise _reject(value, "not a whole number", what, line, source)
        if not (_INTEGER if integer else _DECIMAL).fullmatch(text):
            raise _reject(value, "not a number", what, line, source)
        return int(text) if integer else float(text)
    if integer and not isinstance(value, int):
        if math.isfinite(value) and value == int(value):
            return int(value)
        raise _reject(value, "not a whole number" if math.isfinite(value) else "not finite", what, line, source)
    return value


def _in_range(number: float, value: object, unit: Unit, what: str, line: str, source: Source) -> None:
    if isinstance(number, float) and not math.isfinite(number):
        raise _reject(value, "not finite", what, line, source)
    if number < unit.low:
        raise _reject(value, f"below {unit.show(unit.low)}", what, line, source)
    if number > unit.high:
        raise _reject(value, f"above {unit.show(unit.high)}: not plausible", what, line, source)


def checked(value: object, unit: Unit, *, what: str, line: str = "", source: Source = DUT, scale: float = 1.0) -> float:
    """A number of `unit` read from `line` (`what`: its name there); `scale` converts what was
    printed into `unit` (e.g. 1e-3 for Kbit/s into Mbit/s) before the range is checked. Raises
    source.error (DutError for the DUT, ToolOutputError for a bench tool) quoting the line for
    anything not well formed, not finite or out of the unit's range."""
    try:
        number = float(_parse(value, False, what, line, source)) * scale
    except OverflowError:  # a parsed JSON integer too big for a float
        raise _reject(value, f"above {unit.show(unit.high)}: not plausible", what, line, source) from None
    _in_range(number, value, unit, what, line, source)
    return number


def checked_int(value: object, unit: Unit, *, what: str, line: str = "", source: Source = DUT) -> int:
    """A whole number of `unit` (a count, bytes): as `checked`, and a fraction is rejected too."""
    number = int(_parse(value, True, what, line, source))
    _in_range(number, value, unit, what, line, source)
    return number


def require(ok: bool, message: str, line: str = "", source: Source = DUT) -> None:
    """Numbers that are each plausible but together impossible (more received than sent, an
    interval that ends before it starts): source.error naming them and quoting the line."""
    if not ok:
        where = f" in {quote(line)}" if line else ""
        raise source.error(f"{source.who} printed impossible numbers: {message}{where}")
