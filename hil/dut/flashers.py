"""Programming a board's flash: through its debug probe with pyocd's Python API (needs the part's
CMSIS pack, installed once per PC) or OpenOCD's built-in board script, or an ESP32 through its USB
serial port with pytest-embedded-idf's IdfSerial (esptool's Python API). Each fails fast, with one
message, when nothing is attached: pyocd looks for probes without waiting, OpenOCD stops at its
adapter init, esptool at its connect attempts, and each is bounded by a timeout."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from hil.config.sections import ProbeConfig
from hil.dut.esp_idf_build import IdfBuild
from hil.errors import BenchError

if TYPE_CHECKING:
    from pytest_embedded.log import MessageQueue

NO_PROBE_MESSAGE = "no debug probe attached (connect the board's debug USB port)"
_NO_PROBE = ("No connected debug probes", "unable to find a matching CMSIS-DAP", "No J-Link device found",
             "unable to open", "No target device available")  # fmt: skip


def _run(
    argv: list[str],
    what: str,
    timeout_s: float,
    log_path: Path,
    absent: tuple[tuple[str, ...], str] = (_NO_PROBE, NO_PROBE_MESSAGE),
) -> str:
    """Runs a flasher bounded by timeout_s and logs its output; a failure is one line, naming the
    missing device when the output shows one of absent's markers."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError:
        raise BenchError(f"{what}: {argv[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise BenchError(f"{what}: no answer within {timeout_s:g} s; is the device busy?") from None
    output = proc.stdout + proc.stderr
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text(f"$ {' '.join(argv)}\n{output}")
    if proc.returncode != 0:
        markers, message = absent
        if any(marker in output for marker in markers):
            raise BenchError(f"{what}: {message}")
        lines = [ln for ln in output.strip().splitlines() if "rror" in ln] or output.strip().splitlines()[-1:]
        raise BenchError(f"{what} failed (exit {proc.returncode}): {lines[0].strip() if lines else 'no output'}")
    return output


PYOCD_INSTALL = "pyocd is not installed in the suite's Python (pip requirement pyocd)"


@functools.cache
def pyocd_targets() -> frozenset[str]:
    """The parts pyocd knows on this PC (its built-in targets and those of the CMSIS packs
    installed), in pyocd's normalised spelling: pyocd's own list (`pyocd list --targets`)."""
    try:
        from pyocd.target import normalise_target_type_name
        from pyocd.tools.lists import ListGenerator
    except ImportError:
        raise ValueError(PYOCD_INSTALL) from None
    listed = ListGenerator.list_targets()["targets"]
    return frozenset(normalise_target_type_name(t["name"]) for t in listed)


def pyocd_knows(target: str) -> bool:
    from pyocd.target import normalise_target_type_name

    return normalise_target_type_name(target) in pyocd_targets()


def pyocd_probes(unique_id: str | None = None) -> list[str]:
    """The debug probes pyocd finds now (CMSIS-DAP, ST-Link, J-Link), as "unique id (description)",
    only the one of `unique_id` when given; never waits for one to be plugged in."""
    from pyocd.core.helpers import ConnectHelper

    found = ConnectHelper.get_all_connected_probes(blocking=False, unique_id=unique_id, print_wait_message=False)
    return [f"{p.unique_id} ({p.description})" for p in found]


def _pyocd_program(image: Path, probe: ProbeConfig, log: logging.Logger) -> None:
    """Opens a session on the one probe (probe.unique_id, or the only one attached), programs the
    image (its format from its name: .elf/.axf, .hex, .bin) and resets the target to run it."""
    from pyocd.core.helpers import ConnectHelper
    from pyocd.core.session import Session
    from pyocd.flash.file_programmer import FileProgrammer

    probes = ConnectHelper.get_all_connected_probes(blocking=False, unique_id=probe.unique_id,
                                                    print_wait_message=False)  # fmt: skip
    if not probes:
        others = pyocd_probes() if probe.unique_id else []
        if others:
            raise BenchError(f"debug probe {probe.unique_id} not attached (attached: {', '.join(others)})")
        raise BenchError(NO_PROBE_MESSAGE)
    if len(probes) > 1:
        ids = ", ".join(p.unique_id for p in probes)
        raise BenchError(f"{len(probes)} debug probes attached ({ids}): name the board's as probe.unique_id")
    log.info("probe %s (%s), target %s, image %s", probes[0].unique_id, probes[0].description, probe.target, image)
    with Session(probes[0], target_override=probe.target, options={"frequency": 4_000_000}) as session:
        FileProgrammer(session, progress=None).program(str(image))
        session.target.reset()
    log.info("programmed and reset")


class _NoAnswer(Exception):
    """The flasher's thread was still running at its time limit."""


def _bounded(work: Callable[[], None], timeout_s: float, name: str) -> BaseException | None:
    """Runs a library's flashing in a daemon thread for at most timeout_s: what it raised, None
    when it returned, _NoAnswer when it is still running (a device that does not answer: the
    thread is left to the process's end, as a library call cannot be killed)."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # handed to the caller's thread, which decides
            failure.append(exc)

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        return _NoAnswer()
    return failure[0] if failure else None


def flash_pyocd(image: Path, probe: ProbeConfig, log_path: Path) -> None:
    """Programs a board through pyocd's Python API (session, target, file programmer), bounded by
    probe.timeout_s; pyocd's log goes to `log_path`. A missing pack, no probe, several probes, a
    probe that does not answer or a failed programming is one BenchError line."""
    what = "flasher pyocd"
    try:
        known = pyocd_knows(probe.target)
    except (ImportError, ValueError):
        raise BenchError(f"{what}: {PYOCD_INSTALL}") from None
    if not known:
        raise BenchError(
            f"{what}: no target {probe.target!r}: install its pack once on this PC with "
            f"`pyocd pack install {probe.target}` (needs internet), or set flasher: openocd"
        )
    log_path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_path, mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    log = logging.getLogger("pyocd")  # pyocd's own loggers are its children: their records come here too
    level = log.level
    log.setLevel(logging.INFO)
    log.addHandler(handler)
    try:
        exc = _bounded(lambda: _pyocd_program(image, probe, log), probe.timeout_s, "pyocd-flash")
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        handler.close()
    if isinstance(exc, _NoAnswer):
        raise BenchError(f"{what}: no answer within {probe.timeout_s:g} s; is the probe busy?")
    if exc is not None:
        if isinstance(exc, BenchError):
            raise BenchError(f"{what}: {str(exc).removeprefix(f'{what}: ')}")
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise BenchError(f"{what} failed: {type(exc).__name__}: {first}") from None


def flash_openocd(image: Path, probe: ProbeConfig, log_path: Path) -> None:
    argv = ["openocd", "-f", probe.openocd_board]
    if probe.unique_id:
        argv += ["-c", f"adapter serial {probe.unique_id}"]
    argv += ["-c", f"program {image} verify reset exit"]
    _run(argv, "flasher openocd", probe.timeout_s, log_path)


FLASHERS = {"pyocd": flash_pyocd, "openocd": flash_openocd}

ESPTOOL_TIMEOUT_S = 180.0  # a 4 MB image at 115200 baud takes ~60 s; connect attempts give up in ~10 s
_NO_CHIP = ("Failed to connect", "No serial data received", "could not open port", "No such file or directory",
            "Could not open", "Could not connect", "Couldn't auto detect chip")  # fmt: skip


def _drained(output: MessageQueue) -> str:
    """All that pytest-embedded's message queue holds (esptool's output), as text."""
    parts: list[bytes] = []
    while True:
        try:
            item = output.get(timeout=0.2)
        except queue.Empty:
            break
        parts.append(item if isinstance(item, bytes) else str(item).encode())
    output.close()
    output.join_thread()
    return b"".join(parts).decode(errors="replace")


def flash_idf_serial(build: IdfBuild, port: str, baud: int, log_path: Path) -> None:
    """Writes an ESP-IDF build through pytest-embedded-idf's own serial service, as its auto-flash
    does: IdfSerial connects with esptool (the chip must be the build's target), IdfSerial.flash
    writes the build's flash files with its flasher_args.json settings at `baud` and hard-resets
    the chip, and the port is closed again for the console. esptool's output goes to log_path; no
    chip, a wrong one or a failed write is one BenchError line, the whole bounded by a timeout."""
    # (imported here: esptool and pytest-embedded-idf's serial, 0.1 s of every run's start otherwise)
    from pytest_embedded.log import MessageQueue
    from pytest_embedded_idf.app import IdfApp
    from pytest_embedded_idf.serial import IdfSerial

    what = f"flasher esptool ({build.path.name} on {port})"  # the bench file's name for it
    no_chip = f"no ESP32 answered on {port} (board connected? right port? port in use?)"
    output = MessageQueue()
    app = IdfApp(app_path=str(build.path.parent), build_dir=str(build.path))

    def work() -> None:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):  # type: ignore[type-var]
            IdfSerial(app=app, target=build.target, msg_queue=output, pexpect_proc=None, port=port,
                      esptool_baud=baud, stop_after_init=True)  # fmt: skip

    before = os.environ.get("ESPBAUD")
    os.environ["ESPBAUD"] = str(baud)  # IdfSerial.flash's baud where flasher_args.json names none
    streams = sys.stdout, sys.stderr  # (the redirect is the process's: back at once, even past the timeout)
    try:
        exc = _bounded(work, ESPTOOL_TIMEOUT_S, "esp-flash")
    finally:
        sys.stdout, sys.stderr = streams
        if before is None:
            os.environ.pop("ESPBAUD", None)
        else:
            os.environ["ESPBAUD"] = before
    text = _drained(output) if not isinstance(exc, _NoAnswer) else ""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text(f"IdfSerial(port={port}, target={build.target}).flash: {build.path}\n{text}"
                        + (f"\n{type(exc).__name__}: {exc}\n" if exc else ""))  # fmt: skip
    if isinstance(exc, _NoAnswer):
        raise BenchError(f"{what}: no answer within {ESPTOOL_TIMEOUT_S:g} s; is the port busy?")
    if exc is not None:
        message = f"{exc}"
        if any(marker in message for marker in _NO_CHIP):
            raise BenchError(f"{what}: {no_chip}")
        first = (message.strip().splitlines() or [type(exc).__name__])[0]
        raise BenchError(f"{what} failed: {type(exc).__name__}: {first}")
