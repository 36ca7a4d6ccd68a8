"""The firmware console protocol: every command ends with one final line,
``RESULT <cmd> key=value ...`` or ``ERR <cmd> <reason>``; the boot banner ends with
``BOOT key=value ...``. Pure parsing, shared by the console driver and the self-tests.

A field read as a number goes through hil.numbers' checked conversion in the unit its key names
(`field_unit`): a malformed, non-finite or implausible value is a DutError quoting the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hil.errors import DutError
from hil.numbers import BYTES, COUNT, DBM, MBPS, MS, PERCENT, US, Unit, checked, checked_int, quote


def field_unit(key: str) -> Unit:
    """The unit (and plausible range) of a final line's field, from its key: `mbps` / `*_mbps`
    Mbit/s, `*_pct` percent, `*_ms` ms, `*_us` us, `bytes` / `*_bytes` bytes, `rssi` / `*_dbm` dBm;
    anything else a non-negative count."""
    if key == "mbps" or key.endswith("_mbps"):
        return MBPS
    if key.endswith("_pct"):
        return PERCENT
    if key.endswith("_ms"):
        return MS
    if key.endswith("_us"):
        return US
    if key == "bytes" or key.endswith("_bytes"):
        return BYTES
    if key == "rssi" or key.endswith("_dbm"):
        return DBM
    return COUNT


@dataclass(frozen=True)
class FinalLine:
    kind: str  # "RESULT", "ERR" or "BOOT"
    command: str
    fields: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    line: str = field(default="", compare=False)  # the console line it was read from ("": made by the suite)

    @property
    def ok(self) -> bool:
        return self.kind != "ERR"

    @property
    def text(self) -> str:
        """The line as the DUT printed it (rebuilt from the fields for a line the suite made)."""
        if self.line:
            return self.line
        if self.kind == "ERR":
            return f"ERR {self.command} {self.reason}".rstrip()
        return " ".join([self.kind, self.command, *(f"{k}={v}" for k, v in self.fields.items())])

    def get_int(self, key: str, unit: Unit | None = None) -> int:
        """A whole-number field, checked in `unit` (default: its key's, field_unit)."""
        return checked_int(self._require(key), unit or field_unit(key), what=key, line=self.text)

    def get_float(self, key: str, unit: Unit | None = None) -> float:
        """A number field, checked in `unit` (default: its key's, field_unit)."""
        return checked(self._require(key), unit or field_unit(key), what=key, line=self.text)

    def _require(self, key: str) -> str:
        if key not in self.fields:
            raise DutError(f"DUT reply `{self.kind} {self.command}` lacks {key}= ({quote(self.text)})")
        return self.fields[key]


def parse_fields(text: str, line: str = "") -> dict[str, str]:
    """Parses ``k=v k2=v2``; a token without '=' is a protocol violation (naming `line`)."""
    fields: dict[str, str] = {}
    for token in text.split():
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise DutError(f"malformed key=value token {token!r} in a DUT reply {quote(line or text)}")
        fields[key] = value
    return fields


def parse_final_line(line: str) -> FinalLine | None:
    """Returns the final line a console line is, or None for an ordinary output line."""
    line = line.strip()
    if line.startswith("BOOT "):
        return FinalLine("BOOT", "boot", parse_fields(line[5:], line), line=line)
    for kind in ("RESULT", "ERR"):
        if line.startswith(kind + " "):
            rest = line[len(kind) + 1 :]
            command, _, tail = rest.partition(" ")
            if not command:
                raise DutError(f"malformed DUT reply {quote(line)}")
            if kind == "ERR":
                return FinalLine(kind, command, reason=tail.strip(), line=line)
            return FinalLine(kind, command, parse_fields(tail, line), line=line)
    return None
