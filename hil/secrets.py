"""The run's secrets (Wi-Fi passphrases), kept out of what the console pipeline writes.

A stock firmware's shell echoes the line it is sent (`sta <ssid> <pass>`), and ESP-IDF's iperf
example logs its SoftAP's passphrase in the clear (`AP mode, <ssid> <pass>`): those bytes reach
pytest-embedded's log file, pytest's output and the Allure results' stdout unless they are taken
out on the way. Every passphrase the run reads is registered here (hil.config.sections.WifiConfig.psk),
with its hex form (the project's console carries it so), and `SecretFilter` replaces each with
HIDDEN in a stream of console bytes, holding back a tail that may be the start of one until the
rest arrives (at most HOLD_S: then it cannot be a secret being printed)."""

from __future__ import annotations

import threading

HIDDEN = b"<psk hidden>"
HOLD_S = 1.0  # the longest a possible start of a secret is held back

_secrets: set[bytes] = set()
_lock = threading.Lock()


def register(secret: str) -> None:
    """A secret the run holds, from now on never written by the console pipeline."""
    if not secret:
        return
    raw = secret.encode()
    with _lock:
        _secrets.update({raw, raw.hex().encode(), raw.hex().upper().encode()})


def registered() -> tuple[bytes, ...]:
    with _lock:
        return tuple(sorted(_secrets, key=len, reverse=True))


class SecretFilter:
    """One console stream's filter: `feed` returns what may be written now, secrets replaced;
    `flush` what it held back."""

    def __init__(self) -> None:
        self.held = b""

    def feed(self, data: bytes) -> bytes:
        secrets = registered()
        text = self.held + data
        if not secrets:
            self.held = b""
            return text
        for secret in secrets:
            text = text.replace(secret, HIDDEN)
        keep = _possible_start(text, secrets)
        self.held = text[len(text) - keep :] if keep else b""
        return text[: len(text) - keep]

    def flush(self) -> bytes:
        out, self.held = self.held, b""
        return out


def _possible_start(text: bytes, secrets: tuple[bytes, ...]) -> int:
    """The length of the longest tail of `text` that is the start of a secret (0: none)."""
    longest = min(len(text), max(len(s) for s in secrets) - 1)
    for n in range(longest, 0, -1):
        tail = text[-n:]
        if any(s.startswith(tail) for s in secrets):
            return n
    return 0
