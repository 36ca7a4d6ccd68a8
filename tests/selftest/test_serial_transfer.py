"""The serial file transfer (hil/console/serial_transfer.py) against a fake console that runs the
firmware's `serial` command byte by byte as firmware/common/src/serial_xfer.c does: the file's
bytes (the firmware's unit test holds the same), both directions, a corrupted byte named with its
offset, a lost byte (the PC gives up on the block, the DUT's final line still read), refusals; and
the serial family (hil/scenarios/families/serial_throughput.py): its cases and skip reasons per
bench, its options, its default limits, its record in kbit/s with and without a nominal rate."""

from __future__ import annotations

import contextlib
import time
from types import SimpleNamespace

import pytest

from hil.checks import headline
from hil.config.thresholds import load_thresholds, profile_path
from hil.console.dialects.capabilities import NotApplicable
from hil.console.dialects.registry import dialect_info
from hil.console.protocol import parse_final_line
from hil.console.serial_transfer import ACK, CAN, NAK, TransferSpec, file_bytes, transfer
from hil.errors import DutError
from hil.results.recorder import make_record, metric_better, metric_unit, summary_table
from hil.run_config import profile_from_options
from hil.run_options import swept_axes
from hil.scenarios.catalog import with_family_defaults
from hil.scenarios.contract import BenchFacts, collect
from hil.scenarios.families.serial_throughput import console_rate, nominal_bytes_per_s
from hil.scenarios.profiles import PROFILES
from hil.stats import summarize

pytestmark = pytest.mark.selftest


class FakeFirmware:
    """A console running the firmware's `serial` command (serial_xfer.h), on an in-memory port:
    what the PC writes is handled at once, what the firmware prints waits to be read. `flip_rx`,
    `flip_tx` and `drop_tx` damage the file's byte at that offset on its way."""

    def __init__(self, flip_rx: int | None = None, flip_tx: int | None = None, drop_tx: int | None = None,
                 refuse: str | None = None) -> None:  # fmt: skip
        self.out = bytearray()
        self.line = bytearray()
        self.mode: str | None = None
        self.flip_rx, self.flip_tx, self.drop_tx, self.refuse = flip_rx, flip_tx, drop_tx, refuse
        self.lines: list[str] = []  # the command lines it got
        self.received = bytearray()

    # --- the port (hil.console.serial_transfer.RawPort) ---
    def write(self, data: bytes) -> int:
        for b in data:
            self._byte(b)
        return len(data)

    def read(self, size: int = 1) -> bytes:
        if self.mode is not None and time.monotonic() - self.last > self.timeout_s:
            self._finish("timeout")
        chunk = bytes(self.out[:size])
        del self.out[:size]
        if not chunk:
            time.sleep(0.001)  # a port's read timeout, shortened
        return chunk

    # --- the firmware ---
    def _byte(self, b: int) -> None:
        if self.mode == "rx":
            self._rx(b)
        elif self.mode == "tx":
            self._tx(b)
        elif b == 0x0A:
            self._command(self.line.decode())
            self.line.clear()
        else:
            self.line.append(b)

    def _command(self, line: str) -> None:
        self.lines.append(line)
        if not line.strip():
            return
        if self.refuse is not None:
            self.out += f"ERR {line.split()[0]} {self.refuse}\r\n".encode()
            return
        _, way, size, block, seed, timeout_ms = line.split()
        self.mode, self.size, self.block, self.seed = way, int(size), int(block), int(seed)
        self.timeout_s, self.last = int(timeout_ms) / 1000, time.monotonic()
        self.file = file_bytes(self.size, self.seed)
        self.moved = self.blocks = self.bad_blocks = self.mismatches = 0
        self.first_bad: int | None = None
        self.started = self.block_bad = False
        what = "receiving" if way == "rx" else "sending"
        self.out += f"serial: {what} {size} bytes in blocks of {block} (seed {seed})\r\n".encode()

    def _rx(self, b: int) -> None:
        self.last = time.monotonic()
        if self.moved == self.flip_rx:
            b ^= 0x40
        if b != self.file[self.moved]:
            self.first_bad = self.moved if self.first_bad is None else self.first_bad
            self.mismatches += 1
            self.block_bad = True
        self.moved += 1
        if self.moved % self.block == 0 or self.moved == self.size:
            self.out.append(NAK if self.block_bad else ACK)
            self.blocks += 1
            self.bad_blocks += self.block_bad
            self.block_bad = False
            if self.moved == self.size:
                self._finish("ok")

    def _tx(self, b: int) -> None:
        self.last = time.monotonic()
        if b == CAN:
            self._finish("aborted")
            return
        if self.started:
            self.blocks += 1
            self.bad_blocks += b == NAK
            if self.moved == self.size:
                self._finish("ok")
                return
        self.started = True
        block = bytearray(self.file[self.moved : self.moved + self.block])
        for i in range(len(block)):
            if self.moved + i == self.flip_tx:
                block[i] ^= 0x01
        if self.drop_tx is not None and self.moved <= self.drop_tx < self.moved + len(block):
            del block[self.drop_tx - self.moved]
        self.out += block
        self.moved += self.block if self.moved + self.block <= self.size else self.size - self.moved

    def _finish(self, status: str) -> None:
        rx = self.mode == "rx"
        first = "none" if self.first_bad is None else self.first_bad
        checked = f" mismatches={self.mismatches} first_bad={first}" if rx else ""
        self.out += (
            f"RESULT serial dir={self.mode} status={status} bytes={self.size} block={self.block} seed={self.seed} "
            f"moved={self.moved} blocks={self.blocks} bad_blocks={self.bad_blocks}{checked} stray=0 "
            f"elapsed_us=1000 held=0 held_lost=0\r\n"
        ).encode()
        self.mode = None


def test_the_file_is_the_firmwares() -> None:
    # firmware/tests/test_serial_xfer.c holds the same bytes
    assert file_bytes(8, 1) == bytes([0x51, 0xEC, 0xCF, 0x70, 0x8B, 0xE5, 0x77, 0xB6])
    assert file_bytes(4, 0) == bytes([0x51, 0xE0, 0x7B, 0x01])
    assert len(set(file_bytes(160_292, 1))) == 256  # raw binary: every byte value, LF, CR, NUL among them


@pytest.mark.parametrize("direction", ["dut_rx", "dut_tx"])
@pytest.mark.parametrize(("size", "block"), [(1000, 8), (1000, 256), (7, 16)])
def test_a_clean_transfer_moves_every_byte(direction: str, size: int, block: int) -> None:
    fw = FakeFirmware()
    r = transfer(fw, TransferSpec(direction, size, block, seed=3))  # type: ignore[arg-type]
    assert r.complete and (r.received, r.corrupted, r.missing, r.first_bad) == (size, 0, 0, None)
    assert r.blocks == -(-size // block) and r.bad_blocks == 0 and r.status == "ok"
    assert r.final is not None and r.final.get_int("blocks") == r.blocks
    assert fw.lines == [f"serial {direction[-2:]} {size} {block} 3 2000"]  # nothing else reached the console
    assert r.elapsed_s > 0 and r.bytes_per_s > 0 and r.dut_elapsed_us == 1000


def test_a_corrupted_byte_is_counted_with_its_offset_both_ways() -> None:
    rx = transfer(FakeFirmware(flip_rx=777), TransferSpec("dut_rx", 1000, 64))
    assert (rx.corrupted, rx.first_bad, rx.bad_blocks, rx.missing) == (1, 777, 1, 0)
    tx = transfer(FakeFirmware(flip_tx=333), TransferSpec("dut_tx", 1000, 64))
    assert (tx.corrupted, tx.first_bad, tx.bad_blocks, tx.missing) == (1, 333, 1, 0)
    assert tx.final is not None and tx.final.get_int("bad_blocks") == 1  # the PC's NAK reached the DUT
    assert "1 byte(s) corrupted, the first at offset 333 (block 5, byte 13 of it)" in tx.describe()


def test_a_lost_byte_ends_the_transfer_and_the_console_is_in_step_again() -> None:
    fw = FakeFirmware(drop_tx=500)
    spec = TransferSpec("dut_tx", 1000, 100, dut_timeout_ms=200)
    r = transfer(fw, spec, block_timeout_s=0.05)
    assert not r.complete and r.received == 599 and r.missing == 401 and r.status == "aborted"
    assert r.problem == "block 5 (offset 500): 99 of its 100 bytes within 0.05 s"
    assert fw.lines[-1] == "" and fw.mode is None  # the CAN ended it; an empty line after it
    again = transfer(fw, TransferSpec("dut_rx", 100, 10))  # the next transfer runs as usual
    assert again.complete


def test_a_silent_dut_ends_its_side_by_its_timeout() -> None:
    class Deaf(FakeFirmware):
        def _rx(self, b: int) -> None:  # takes the bytes, never answers
            self.last = time.monotonic()

    fw = Deaf()
    r = transfer(fw, TransferSpec("dut_rx", 100, 10, dut_timeout_ms=100), block_timeout_s=0.05)
    assert r.status == "timeout" and r.problem is not None and "block 0 (offset 0): nothing within 0.05 s" in r.problem
    assert r.received == 0 and r.missing == 100  # the DUT's own count, from its final line


def test_a_refusal_is_the_duts_and_a_missing_command_not_applicable() -> None:
    with pytest.raises(DutError, match=r"DUT refused `serial rx 10 8 1 2000`: busy: iperf-server running"):
        transfer(FakeFirmware(refuse="busy: iperf-server running"), TransferSpec("dut_rx", 10, 8))
    with pytest.raises(NotApplicable, match="has no `serial` command"):
        transfer(FakeFirmware(refuse="unknown command (try help)"), TransferSpec("dut_tx", 10, 8))
    with pytest.raises(ValueError, match="bad transfer"):
        TransferSpec("dut_rx", 0, 8)


def _serial_cases(**facts: object) -> list[tuple[str, str | None]]:
    bench = BenchFacts(PROFILES["quick"], **facts)  # type: ignore[arg-type]
    return [(c.case.id, c.skip) for c in collect(bench) if c.case.family.marker == "serial"]


def test_every_block_size_each_way_and_the_baud_sweep_only_on_a_port_with_a_rate() -> None:
    pty = _serial_cases(dialect=dialect_info("hil-fw"))
    blocks = [f"serial/{d}-b{b}" for d in ("dut_rx", "dut_tx") for b in (8, 16, 32, 64, 96, 128, 160, 256)]
    assert [i for i, skip in pty if skip is None] == blocks
    swept = [(i, skip) for i, skip in pty if "baud" in i]
    assert len(swept) == 8 and all(skip is not None and "no baud rate" in skip for _, skip in swept)
    board = _serial_cases(dialect=dialect_info("hil-fw"), console_baud=115200, local=False)
    assert all(skip is None for _, skip in board) and "serial/dut_tx-b256-baud921600" in dict(board)


@pytest.mark.parametrize("dialect", ["espressif-iperf", "zephyr-zperf"])
@pytest.mark.parametrize("in_path", [False, True])
def test_a_stock_console_or_none_is_collected_and_skipped_with_the_reason(dialect: str, in_path: bool) -> None:
    stock = _serial_cases(dialect=dialect_info(dialect), in_path=in_path)
    assert len(stock) == 24
    assert all(skip and f"not applicable to console dialect {dialect}" in skip and "`serial` command" in skip
               for _, skip in stock)  # fmt: skip
    assert all(skip and "no console" in skip for _, skip in _serial_cases(in_path=True))  # a black box
    bridge = _serial_cases(dialect=dialect_info("hil-fw"), in_path=True)  # our firmware's management console
    assert sum(skip is None for _, skip in bridge) == 16


def _options(**kw: object) -> SimpleNamespace:
    return SimpleNamespace(
        **({"profile": "quick", "stream_duration": None} | {a.field: None for a in swept_axes()} | kw)
    )


def test_the_points_come_from_the_profile_or_the_command_line() -> None:
    assert {"--serial-blocks", "--serial-bytes", "--serial-bauds"} <= {a.option for a in swept_axes()}
    profile = profile_from_options(_options(serial_blocks="8,256", serial_bytes="4096"))
    cases = [
        c.case for c in collect(BenchFacts(profile, dialect=dialect_info("hil-fw"))) if c.case.id.startswith("serial/")
    ]
    assert [c.id for c in cases][:2] == ["serial/dut_rx-b8", "serial/dut_rx-b256"]
    for kw, message in (({"serial_blocks": "8,0"}, "--serial-blocks values must lie in 1..1024"),
                        ({"serial_blocks": "eight"}, "--serial-blocks takes comma-separated integers"),
                        ({"serial_bytes": "1M"}, "--serial-bytes takes one file size in bytes"),
                        ({"serial_bauds": "300"}, "--serial-bauds values must lie in 1200..3000000")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            profile_from_options(_options(**kw))


def test_default_limits_no_corrupted_and_no_missing_byte() -> None:
    for name in ("virtual-100m", "qemu-20m", "bridge-virtual", "same70-100m"):
        limits = with_family_defaults(load_thresholds(profile_path(name))).limits("serial", "dut_tx-b8")
        assert sorted(limits.bounds()) == [("max", "corrupted", 0.0), ("max", "missing", 0.0)]


def test_a_console_record_is_kbit_per_s_with_its_bytes_per_s_and_a_nominal_rate_only_where_one_exists() -> None:
    pty = make_record("serial", "dut_rx-b8", "d", summarize([673.8]), None, unit="kbit/s")
    pty.measured.update(bytes_per_s=84221.0, corrupted=0.0, missing=0.0)
    assert pty.metrics()["kbps"] == 673.8 and pty.efficiency_pct is None
    assert headline(pty) == "median 673.8 kbit/s (84221 B/s), no nominal rate"
    uart = make_record("serial", "dut_rx-b256", "d", summarize([80.0, 84.0]), 92.16, unit="kbit/s")
    uart.measured["bytes_per_s"] = 10250.0
    assert round(uart.metrics()["efficiency_pct"], 1) == 89.0
    assert headline(uart) == "median 82.0 kbit/s (10250 B/s) = 89.0 % of nominal 92.2"
    assert (metric_unit("kbps"), metric_unit("bytes_per_s"), metric_unit("corrupted")) == ("kbit/s", "B/s", "")
    assert metric_better("kbps") == metric_better("bytes_per_s") == "higher" and metric_better("missing") == "lower"
    table = "\n".join(summary_table([pty, uart]))
    assert "console throughput (kbit/s)" in table and "none" in table and "92.2" in table


class BaudPort:
    """pytest-embedded's serial port of a board whose firmware follows `serial baud`: it confirms
    only when the PC's port is at the rate it switched to."""

    def __init__(self, refuse: bool = False) -> None:
        self.baudrate = 115200
        self.dut_rate = 115200
        self.refuse = refuse
        self.written: list[tuple[int, bytes]] = []
        self.out = b""

    def write(self, data: bytes) -> int:
        self.written.append((self.baudrate, data))
        if data == b"serial baud confirm\n" and self.baudrate == self.dut_rate:
            self.out += f"RESULT serial action=baud_confirm baud={self.dut_rate}\r\n".encode()
        return len(data)

    def read(self, size: int = 1) -> bytes:
        chunk, self.out = self.out[:size], self.out[size:]
        return chunk

    def command(self, line: str, timeout_s: float) -> SimpleNamespace:  # the console driver's
        rate = int(line.split()[-1])
        if self.refuse:
            return SimpleNamespace(final=parse_final_line("ERR serial this console has no baud rate to set (x)"))
        self.dut_rate = rate
        return SimpleNamespace(final=parse_final_line(f"RESULT serial action=baud baud={rate} previous=115200"))


def _board(port: BaudPort) -> SimpleNamespace:
    serial = SimpleNamespace(proc=port, disable_redirect_thread=contextlib.nullcontext)
    config = SimpleNamespace(LOCAL=False, console=SimpleNamespace(baud=115200))
    alive = SimpleNamespace(alive=lambda: True)
    embedded = SimpleNamespace(serial=serial)
    dut = SimpleNamespace(config=config, embedded=embedded, adapter=alive, require_console=lambda: (port, None))
    return SimpleNamespace(dut=dut)


def test_a_point_of_the_baud_sweep_switches_both_ends_and_back() -> None:
    port = BaudPort()
    hil = _board(port)
    with console_rate(hil, 460800):  # type: ignore[arg-type]
        assert port.baudrate == port.dut_rate == 460800
        assert nominal_bytes_per_s(hil, 460800) == 46080.0  # type: ignore[arg-type]  # 10 bits a byte
    assert port.baudrate == port.dut_rate == 115200
    assert port.written == [(460800, b"serial baud confirm\n"), (115200, b"serial baud confirm\n")]
    with (
        pytest.raises(NotApplicable, match="cannot change its baud rate"),
        console_rate(_board(BaudPort(refuse=True)), 921600),
    ):  # type: ignore[arg-type]
        pass
