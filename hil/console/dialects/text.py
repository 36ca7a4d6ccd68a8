"""What every stock console's lines need before a parser reads them: colour codes and the shell's
prompt removed (ESP-IDF colours its log lines with VT100 codes; Zephyr's shell colours errors and
puts its prompt `uart:~$ ` in front of the echoed command and of output that follows it on the
same line)."""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PROMPTS = ("uart:~$ ", "iperf> ", "esp32> ", "esp> ")


def clean(line: str) -> str:
    """The line without colour codes, carriage returns and leading prompts."""
    text = _ANSI.sub("", line).replace("\r", "").rstrip()
    changed = True
    while changed:
        changed = False
        for prompt in _PROMPTS:
            stripped = text.lstrip()
            if stripped.startswith(prompt.rstrip()) and (stripped == prompt.rstrip() or stripped.startswith(prompt)):
                text = stripped[len(prompt) :] if stripped.startswith(prompt) else ""
                changed = True
    return text
