"""The DUT's serial port: there, not held by another program, and what answers on it - the
firmware's console in the bench file's dialect, or (an ESP32 not flashed yet) the chip's ROM
bootloader through esptool's API."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

from hil.config.sections import DutBase
from hil.console.dialects.registry import make_driver
from hil.console.serial_console import SerialConsole
from hil.doctor.finding import Finding, ok, problem
from hil.dut.board import local_port_missing
from hil.errors import BenchError, DutError

BY_ID = Path("/dev/serial/by-id")
IDENTITY_FIELDS = ("name", "version", "target", "variant", "role", "ip")


def _listed_ports() -> str:
    """The serial devices a user would choose from, by their stable names."""
    try:
        names = sorted(p.name for p in BY_ID.iterdir())
    except OSError:
        names = []
    return ", ".join(names) if names else "none under /dev/serial/by-id"


def present(port: str) -> Finding:
    if "://" in port:
        return ok("serial port", f"{port} (a network port: its console must answer)")
    if local_port_missing(port):
        return problem(
            "serial port",
            f"{port} does not exist (attached: {_listed_ports()})",
            "plug the board in, or set console.port to its /dev/serial/by-id/... name",
        )
    return ok("serial port", f"{port} -> {os.path.realpath(port)}")


def holders(port: str) -> list[str]:
    """The other processes that have the device open, as "pid (name)"."""
    device = os.path.realpath(port)
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if any(os.path.realpath(fd) == device for fd in (proc / "fd").iterdir()):
                found.append(f"{proc.name} ({(proc / 'comm').read_text().strip()})")
        except OSError:  # gone, or not ours to read
            continue
    return found


def not_held(port: str) -> Finding:
    held_by = holders(port)
    if held_by:
        return problem(
            "port in use",
            f"{port} is open in {', '.join(held_by)}",
            "close that program (a terminal: screen, minicom, idf.py monitor) and run again",
        )
    return ok("port in use", "no other program has it open")


def console_answers(dut: DutBase, timeout_s: float) -> tuple[bool, str]:
    """Whether the firmware's console answers its dialect's identity question, and what it said."""
    port = dut.console.port
    try:
        with SerialConsole(port, dut.console.baud) as console:
            reply = make_driver(dut.console.dialect, console).identify(timeout_s)
    except (DutError, BenchError, OSError) as exc:
        return False, f"{exc}".splitlines()[0]
    named = [f"{k}={reply.fields[k]}" for k in IDENTITY_FIELDS if k in reply.fields]
    return True, " ".join(named) if named else reply.text[:120]


def esp_rom_answers(port: str) -> tuple[bool, str]:
    """Whether an ESP chip's ROM bootloader answers on the port (esptool resets it into download
    mode, reads its type, and resets it to run its firmware again)."""
    import esptool

    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            chip = esptool.detect_chip(port, 115200, connect_attempts=2)
            try:
                name = str(chip.CHIP_NAME)
            finally:
                chip.hard_reset()
                chip._port.close()  # esptool's loader holds the port it opened
    except Exception as exc:  # esptool's own FatalError, a serial error: the chip did not answer
        return False, f"{exc}".strip().splitlines()[0] if f"{exc}".strip() else type(exc).__name__
    return True, name
