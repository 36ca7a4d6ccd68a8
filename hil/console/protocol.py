"""The firmware console protocol: every command ends with one final line,
``RESULT <cmd> key=value ...`` or ``ERR <cmd> <reason>``; the boot banner ends with
``BOOT key=value ...``. Pure parsing, shared by the console driver and the self-tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hil.errors import DutError


@dataclass(frozen=True)
class FinalLine:
    kind: str  # "RESULT", "ERR" or "BOOT"
    command: str
    fields: dict[str, str] = field(default_factory=dict)
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.kind != "ERR"

    def get_int(self, key: str) -> int:
        return int(self._require(key))

    def get_float(self, key: str) -> float:
        return float(self._require(key))

    def _require(self, key: str) -> str:
        if key not in self.fields:
            raise DutError(f"DUT reply `{self.kind} {self.command}` lacks {key}=")
        return self.fields[key]


def parse_fields(text: str) -> dict[str, str]:
    """Parses ``k=v k2=v2``; a token without '=' is a protocol violation."""
    fields: dict[str, str] = {}
    for token in text.split():
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise DutError(f"malformed key=value token {token!r} in a DUT reply")
        fields[key] = value
    return fields


def parse_final_line(line: str) -> FinalLine | None:
    """Returns the final line a console line is, or None for an ordinary output line."""
    line = line.strip()
    if line.startswith("BOOT "):
        return FinalLine("BOOT", "boot", parse_fields(line[5:]))
    for kind in ("RESULT", "ERR"):
        if line.startswith(kind + " "):
            rest = line[len(kind) + 1 :]
            command, _, tail = rest.partition(" ")
            if not command:
                raise DutError(f"malformed DUT reply {line!r}")
            if kind == "ERR":
                return FinalLine(kind, command, reason=tail.strip())
            return FinalLine(kind, command, parse_fields(tail))
    return None
