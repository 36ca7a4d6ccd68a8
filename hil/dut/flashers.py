"""Programming a board's flash: through its debug probe with pyocd (needs the part's CMSIS
pack, installed once per PC) or OpenOCD's built-in board script, or an ESP32 through its USB
serial port with esptool. Each fails fast, with one message, when nothing is attached: pyocd is
run with --no-wait, OpenOCD stops at its adapter init, esptool at its connect attempts, and each
is bounded by a timeout."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from hil.config.sections import ProbeConfig
from hil.dut.esp_idf_build import IdfBuild
from hil.errors import BenchError

_NO_PROBE = ("No connected debug probes", "unable to find a matching CMSIS-DAP", "No J-Link device found",
             "unable to open", "No target device available")  # fmt: skip


def _run(
    argv: list[str],
    what: str,
    timeout_s: float,
    log_path: Path,
    absent: tuple[tuple[str, ...], str] = (_NO_PROBE, "no debug probe attached (connect the board's debug USB port)"),
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


def pyocd_has_target(pyocd: str, target: str) -> bool:
    out = subprocess.run([pyocd, "list", "--targets"], capture_output=True, text=True, timeout=60, check=False)
    return any(line.split()[:1] == [target] for line in out.stdout.splitlines())


def _pyocd_command() -> str | None:
    """pyocd of this Python environment (the suite's venv need not be on PATH), else PATH's."""
    beside = Path(sys.executable).parent / "pyocd"
    return str(beside) if beside.is_file() else shutil.which("pyocd")


def flash_pyocd(image: Path, probe: ProbeConfig, log_path: Path) -> None:
    pyocd = _pyocd_command()
    if pyocd is None:
        raise BenchError("flasher pyocd: the pyocd command is not installed (pip requirement pyocd)")
    if not pyocd_has_target(pyocd, probe.target):
        raise BenchError(
            f"flasher pyocd: no target {probe.target!r}: install its pack once on this PC with "
            f"`pyocd pack install {probe.target}` (needs internet), or set flasher: openocd"
        )
    argv = [pyocd, "flash", "--no-wait", "-t", probe.target, *(["-u", probe.unique_id] if probe.unique_id else []),
            str(image)]  # fmt: skip
    _run(argv, "flasher pyocd", probe.timeout_s, log_path)  # programs, then resets the target (pyocd's default)


def flash_openocd(image: Path, probe: ProbeConfig, log_path: Path) -> None:
    argv = ["openocd", "-f", probe.openocd_board]
    if probe.unique_id:
        argv += ["-c", f"adapter serial {probe.unique_id}"]
    argv += ["-c", f"program {image} verify reset exit"]
    _run(argv, "flasher openocd", probe.timeout_s, log_path)


FLASHERS = {"pyocd": flash_pyocd, "openocd": flash_openocd}

ESPTOOL_TIMEOUT_S = 180.0  # a 4 MB image at 115200 baud takes ~60 s; connect attempts give up in ~10 s
_NO_CHIP = ("Failed to connect", "No serial data received", "could not open port", "No such file or directory",
            "Could not open", "Could not connect")  # fmt: skip


def esptool_command(build: IdfBuild, port: str, baud: int) -> list[str]:
    """esptool of this Python environment (a pip requirement), as a module, with the build's
    flash arguments."""
    return [sys.executable, "-m", "esptool", *build.esptool_args(port, baud)]


def flash_esptool(build: IdfBuild, port: str, baud: int, log_path: Path) -> None:
    """Writes bootloader, partition table and app of an ESP-IDF build, then hard-resets the chip."""
    what = f"flasher esptool ({build.path.name} on {port})"
    no_chip = f"no ESP32 answered on {port} (board connected? right port? port in use?)"
    _run(esptool_command(build, port, baud), what, ESPTOOL_TIMEOUT_S, log_path, (_NO_CHIP, no_chip))
