"""A file moved through the DUT's console in acknowledged blocks, checked byte for byte: the PC's
side of the project firmware's `serial` command (firmware/common/include/serial_xfer.h). The
thesis's UART file transfer by block size (seed 004, 5.4) and ezTCP's throughput = bytes / time
(seed 002).

The file is a pseudo-random byte sequence both sides make from a seed (`file_bytes`: xorshift32,
one step per byte, its top byte), so the DUT checks every byte it receives without storing the
file and the PC checks every byte it gets. Bytes go raw, every value 0x00-0xFF, no framing: the
port is pytest-embedded's own serial port, taken for the transfer with its reading thread paused
(`raw_port`). Through that thread the bytes would arrive intact too, but 50 ms apart (it reads the
port every 50 ms: one round trip per block would cost 17 minutes for 8-byte blocks), and it would
copy them into the console log and the terminal.

- `dut_rx` (PC -> DUT, `serial rx`): the PC writes a block, the DUT answers ACK (0x06), or NAK
  (0x15) when a byte of it differs, before the PC writes the next one.
- `dut_tx` (DUT -> PC, `serial tx`): the PC's ACK is the go; the DUT writes a block per ACK or NAK
  the PC answers with; CAN (0x18) ends it early.

The PC's clock runs from its first byte written (the first block, or the go) to the last block
acknowledged (dut_rx) or received (dut_tx): bytes / that time is the throughput. A block not
acknowledged, or not received whole, within `block_timeout_s` ends the transfer on the PC's side
(dut_tx: CAN); the DUT ends its side after its own timeout and says so in its final line, which
the PC always reads, so the console is in step again for the next command.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

from hil.console.dialects.capabilities import NotApplicable
from hil.console.protocol import FinalLine, parse_final_line
from hil.errors import DutError

ACK, NAK, CAN = 0x06, 0x15, 0x18
Direction = Literal["dut_rx", "dut_tx"]
SEQ_START = 0x9E3779B9
DEFAULT_DUT_TIMEOUT_MS = 2000  # the firmware's FW_SERIAL_DEFAULT_TIMEOUT_MS
READY_S = 5.0  # the command's first line
RESULT_MARGIN_S = 3.0  # the final line after the DUT's own timeout
QUIET_S = 0.2  # a console silent this long has nothing more to say


@functools.lru_cache(maxsize=8)
def file_bytes(size: int, seed: int) -> bytes:
    """The file of `size` bytes from `seed`, as the firmware makes it (serial_seq_next)."""
    x = (seed + SEQ_START) & 0xFFFFFFFF or SEQ_START
    out = bytearray(size)
    for i in range(size):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out[i] = x >> 24
    return bytes(out)


class RawPort(Protocol):
    """What a transfer needs of a port: pyserial's raw reads and writes (a read returns what came
    within the port's own timeout, possibly nothing)."""

    def write(self, data: bytes, /) -> int | None: ...

    def read(self, size: int = 1, /) -> bytes: ...


@dataclass(frozen=True)
class TransferSpec:
    direction: Direction
    size: int  # bytes of the file
    block: int  # bytes per acknowledged block
    seed: int = 1
    dut_timeout_ms: int = DEFAULT_DUT_TIMEOUT_MS  # the DUT ends its side after this long without a byte

    def __post_init__(self) -> None:
        if self.size < 1 or self.block < 1 or not 0 <= self.seed <= 0xFFFFFFFF or self.dut_timeout_ms < 1:
            raise ValueError(f"bad transfer {self}: size and block of 1 byte at least, a 32-bit seed")

    @property
    def command(self) -> str:
        way = "rx" if self.direction == "dut_rx" else "tx"
        return f"serial {way} {self.size} {self.block} {self.seed} {self.dut_timeout_ms}"

    @property
    def blocks(self) -> int:
        return -(-self.size // self.block)


@dataclass
class TransferResult:
    spec: TransferSpec
    received: int  # bytes the receiver got (the DUT's count for dut_rx, the PC's for dut_tx)
    corrupted: int  # bytes that differ from the file (the receiver's count)
    first_bad: int | None  # the offset of the first of them in the file
    blocks: int  # blocks acknowledged
    bad_blocks: int  # blocks acknowledged with a NAK
    elapsed_s: float  # the PC's clock (module docstring)
    final: FinalLine | None  # the DUT's final line (None: it gave none)
    problem: str | None = None  # why the transfer stopped before the end, in words
    transcript: list[str] = field(default_factory=list)  # the console's text around the data

    @property
    def missing(self) -> int:
        return self.spec.size - self.received

    @property
    def bytes_per_s(self) -> float:
        return self.received / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def dut_elapsed_us(self) -> int | None:
        return self.final.get_int("elapsed_us") if self.final is not None and self.final.ok else None

    @property
    def status(self) -> str:
        """The DUT's status (ok, timeout, aborted) or why there is none."""
        if self.final is None:
            return "no final line"
        return self.final.fields.get("status", "?") if self.final.ok else f"ERR {self.final.reason}"

    @property
    def complete(self) -> bool:
        return self.problem is None and self.missing == 0 and self.status == "ok"

    def describe(self) -> str:
        """One line: what moved, what was wrong with it, and where."""
        s = self.spec
        way = "PC -> DUT" if s.direction == "dut_rx" else "DUT -> PC"
        text = (
            f"{s.size} B {way} in {s.block}-byte blocks (seed {s.seed}): {self.received} B received in "
            f"{self.elapsed_s:.3f} s ({self.bytes_per_s:.0f} B/s), DUT status {self.status}"
        )
        if self.corrupted:
            block = (self.first_bad or 0) // s.block
            text += (
                f"; {self.corrupted} byte(s) corrupted, the first at offset {self.first_bad} "
                f"(block {block}, byte {(self.first_bad or 0) % s.block} of it)"
            )
        if self.missing:
            text += f"; {self.missing} byte(s) missing from offset {self.received}"
        if self.problem:
            text += f"; {self.problem}"
        return text


class _Reader:
    """Reads a port with deadlines: exact byte counts for the data, lines for the console's text."""

    def __init__(self, port: RawPort, alive: Callable[[], bool]) -> None:
        self.port = port
        self.alive = alive
        self.pending = b""
        self.checked = time.monotonic()

    def _more(self, want: int) -> bytes:
        chunk = self.port.read(max(1, want))
        now = time.monotonic()
        if not chunk and now - self.checked > 1.0:
            self.checked = now
            if not self.alive():
                raise DutError("DUT died during a serial transfer")
        return chunk

    def exact(self, n: int, timeout_s: float) -> bytes:
        """n bytes, or fewer when the deadline passed first."""
        deadline = time.monotonic() + timeout_s
        while len(self.pending) < n and time.monotonic() < deadline:
            self.pending += self._more(n - len(self.pending))
        out, self.pending = self.pending[:n], self.pending[n:]
        return out

    def line(self, timeout_s: float) -> str | None:
        """The next line without its ending (undecodable bytes replaced), None at the deadline."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self.pending:
            if time.monotonic() >= deadline:
                return None
            self.pending += self._more(256)
        raw, _, self.pending = self.pending.partition(b"\n")
        text = raw.rstrip(b"\r").decode("ascii", errors="replace")
        return text if text.isprintable() else repr(text)  # bytes of a file cut short, as such

    def drain(self, quiet_s: float = QUIET_S) -> bytes:
        """Whatever arrives until the port is quiet for quiet_s."""
        got, self.pending = self.pending, b""
        last = time.monotonic()
        while time.monotonic() - last < quiet_s:
            chunk = self._more(4096)
            if chunk:
                got += chunk
                last = time.monotonic()
        return got


def _refused(spec: TransferSpec, final: FinalLine) -> Exception:
    if "unknown command" in final.reason:
        return NotApplicable(f"not applicable: the DUT's firmware has no `serial` command ({final.text})")
    return DutError(f"DUT refused `{spec.command}`: {final.reason}")


def _wait_ready(reader: _Reader, spec: TransferSpec, transcript: list[str]) -> None:
    """The command's first line ("serial: receiving ..." / "serial: sending ..."); an ERR is the DUT's answer."""
    deadline = time.monotonic() + READY_S
    while (line := reader.line(max(0.0, deadline - time.monotonic()))) is not None:
        transcript.append(line)
        final = parse_final_line(line)
        if final is not None and final.command == "serial" and not final.ok:
            raise _refused(spec, final)
        if line.startswith(("serial: receiving", "serial: sending")):
            return
    seen = " | ".join(transcript[-3:]) or "silent"
    raise DutError(f"DUT did not start `{spec.command}` within {READY_S:g} s ({seen})")


def _wait_result(reader: _Reader, spec: TransferSpec, transcript: list[str]) -> FinalLine | None:
    """The DUT's final line (after its own timeout at the latest); stray bytes before it are skipped."""
    deadline = time.monotonic() + spec.dut_timeout_ms / 1000 + RESULT_MARGIN_S
    while (line := reader.line(max(0.0, deadline - time.monotonic()))) is not None:
        transcript.append(line)
        final = parse_final_line(line[line.find("RESULT serial") :] if "RESULT serial" in line else line)
        if final is not None and final.command == "serial":
            return final
    return None


def _count_bad(got: bytes, want: bytes, offset: int) -> tuple[int, int | None]:
    bad = [i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b]
    return len(bad), (offset + bad[0] if bad else None)


def transfer(port: RawPort, spec: TransferSpec, alive: Callable[[], bool] = lambda: True,
             block_timeout_s: float = 1.0) -> TransferResult:  # fmt: skip
    """Moves the file one way (spec.direction) and returns what arrived, checked byte for byte. A
    DUT that refuses the command is a DutError (NotApplicable when it has no `serial` command);
    a transfer that stops early is a result with its `problem`, never an exception."""
    reader = _Reader(port, alive)
    transcript = [f"> {spec.command}"]
    port.write(spec.command.encode() + b"\n")
    _wait_ready(reader, spec, transcript)
    run = _send_file if spec.direction == "dut_rx" else _receive_file
    result = run(port, reader, spec, block_timeout_s)
    result.transcript = transcript
    way = "PC -> DUT" if spec.direction == "dut_rx" else "DUT -> PC"
    transcript.append(f"[raw bytes {way}: {result.blocks} of {spec.blocks} blocks of {spec.block} B acknowledged]")
    result.final = _wait_result(reader, spec, transcript)
    if result.final is None:
        result.problem = (result.problem + "; " if result.problem else "") + "the DUT gave no final line"
    elif spec.direction == "dut_rx" and result.final.ok:  # the DUT counted what it received
        result.received = result.final.get_int("moved")
        result.corrupted = result.final.get_int("mismatches")
        result.first_bad = result.final.get_int("first_bad") if result.corrupted else None
    if not result.complete:  # back in step: the DUT's line buffer emptied, its leftovers read
        port.write(b"\n")
        if leftover := reader.drain():
            transcript.append(f"[after it: {leftover[:200]!r}]")
    transcript.append(f"[{result.describe()}]")
    return result


def _send_file(port: RawPort, reader: _Reader, spec: TransferSpec, block_timeout_s: float) -> TransferResult:
    data = file_bytes(spec.size, spec.seed)
    blocks = bad = 0
    problem = None
    t0 = time.perf_counter()
    for start in range(0, spec.size, spec.block):
        port.write(data[start : start + spec.block])
        ack = reader.exact(1, block_timeout_s)
        if ack not in (bytes([ACK]), bytes([NAK])):
            reader.pending = ack + reader.pending  # the DUT's text (its final line after a timeout)
            what = f"{ack!r} instead" if ack else f"nothing within {block_timeout_s:g} s"
            problem = f"block {start // spec.block} (offset {start}): {what} of its acknowledgement"
            break
        blocks += 1
        bad += ack[0] == NAK
    elapsed = time.perf_counter() - t0
    # the DUT's final line says what it received; until then, what it acknowledged
    received = min(spec.size, blocks * spec.block)
    return TransferResult(spec, received, 0, None, blocks, bad, elapsed, None, problem)


def _receive_file(port: RawPort, reader: _Reader, spec: TransferSpec, block_timeout_s: float) -> TransferResult:
    data = file_bytes(spec.size, spec.seed)
    received = corrupted = blocks = bad = 0
    first_bad: int | None = None
    problem = None
    t0 = time.perf_counter()
    port.write(bytes([ACK]))  # the go
    t1 = t0
    for start in range(0, spec.size, spec.block):
        want = data[start : start + spec.block]
        got = reader.exact(len(want), block_timeout_s)
        t1 = time.perf_counter()
        received += len(got)
        if got != want:
            n, first = _count_bad(got, want, start)
            corrupted += n
            first_bad = first if first_bad is None else first_bad
        if len(got) < len(want):
            problem = (
                f"block {start // spec.block} (offset {start}): {len(got)} of its {len(want)} bytes "
                f"within {block_timeout_s:g} s"
            )
            port.write(bytes([CAN]))
            break
        blocks += 1
        bad += got != want
        port.write(bytes([NAK if got != want else ACK]))
    return TransferResult(spec, received, corrupted, first_bad, blocks, bad, t1 - t0, None, problem)


@contextlib.contextmanager
def raw_port(embedded: object) -> Iterator[RawPort]:
    """pytest-embedded's serial port of a DUT, taken for raw bytes: its reading thread paused
    (`Serial.disable_redirect_thread`), the port itself (pyserial, as the service opened it) read
    and written directly, the thread started again afterwards."""
    serial = getattr(embedded, "serial", None)
    port = getattr(serial, "proc", None)
    pause = getattr(serial, "disable_redirect_thread", None)
    if port is None or pause is None:
        raise NotApplicable("not applicable: the DUT's console is no serial port of pytest-embedded's serial service")
    with pause():
        yield port
