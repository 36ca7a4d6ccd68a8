"""The firmware image a DUT is flashed with: the bench file's image path, or a build
configuration of the project's firmware, built on demand (one build directory per config)."""

from __future__ import annotations

import os
import platform
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

from hil.config.errors import ConfigError
from hil.config.sections import DutBase
from hil.errors import BenchError

ARM_ELF = "arm-elf"  # a Cortex-M board's image (flashed by a probe, booted by QEMU)
# a Cortex-M board's image as pyocd flashes it, which tells the format by the file's name: an ARM
# ELF (.elf, .axf), an Intel HEX file (.hex) or a raw binary written at the start of flash (.bin)
ARM_IMAGE = "arm-image"
HOST_EXECUTABLE = "host-executable"  # the host firmware, started as a program on the bench PC
_EM_ARM = 40
_EM_HOST = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183, "i686": 3, "i386": 3}
_ELF_TYPES = {2: "an executable", 3: "a position-independent executable", 1: "a relocatable object", 4: "a core dump"}


def check_image_file(path: Path, fmt: str, what: str) -> None:
    """A firmware image a bench file names: it exists, can be read and is of the format its kind
    flashes (a 32-bit ARM ELF for a board - or for pyocd also an Intel HEX file or a raw binary -,
    an executable of this machine for the host firmware). One ConfigError naming the file and the
    problem: no retry can help."""
    if not path.exists():
        raise ConfigError(f"{what}: firmware image {path} does not exist")
    if not path.is_file():
        raise ConfigError(f"{what}: firmware image {path} is not a file")
    try:
        with path.open("rb") as f:
            head = f.read(20)
    except OSError as exc:
        raise ConfigError(f"{what}: firmware image {path} cannot be read: {exc.strerror}") from None
    if fmt == ARM_IMAGE and path.suffix == ".hex":
        _check_intel_hex(path, head, f"{what}: firmware image {path}")
        return
    if fmt == ARM_IMAGE and path.suffix == ".bin":
        _check_vector_table(head, f"{what}: firmware image {path}")
        return
    if fmt == ARM_IMAGE and path.suffix not in (".elf", ".axf"):
        raise ConfigError(
            f"{what}: firmware image {path}: pyocd flashes .elf, .axf, .hex or .bin files "
            "(it tells the format by the name)"
        )
    if head[:4] != b"\x7fELF" or len(head) < 20:
        raise ConfigError(f"{what}: firmware image {path} is not an ELF file (its first bytes are {head[:4]!r})")
    elf_class, data = head[4], head[5]
    endian = "<" if data == 1 else ">"
    elf_type, machine = struct.unpack(f"{endian}HH", head[16:20])
    if fmt in (ARM_ELF, ARM_IMAGE):
        if elf_class != 1 or machine != _EM_ARM:
            raise ConfigError(
                f"{what}: firmware image {path} is an ELF for machine {machine} ({64 if elf_class == 2 else 32}-bit), "
                "not a 32-bit ARM image for a Cortex-M board"
            )
        return
    host = _EM_HOST.get(platform.machine().lower())
    if host is not None and machine != host:
        raise ConfigError(
            f"{what}: firmware image {path} is built for ELF machine {machine}, not this PC's "
            f"{platform.machine()} ({host}): the host firmware runs as a program here"
        )
    if elf_type not in (2, 3):
        kind = _ELF_TYPES.get(elf_type, "no executable")
        raise ConfigError(f"{what}: firmware image {path} is {kind}, not a program")
    if not os.access(path, os.X_OK):
        raise ConfigError(f"{what}: firmware image {path} is not executable (chmod +x {path})")


def _check_intel_hex(path: Path, head: bytes, what: str) -> None:
    """Every line an Intel HEX record (`:LLAAAATT<data>CC`, its checksum right), one end-of-file record."""
    if head[:4] == b"\x7fELF":
        raise ConfigError(f"{what} is an ELF file: name it .elf (pyocd tells the format by the name)")
    try:
        lines = path.read_text(encoding="ascii").splitlines()
    except (UnicodeDecodeError, OSError):
        raise ConfigError(f"{what} is not an Intel HEX file (not ASCII text)") from None
    ended = False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = bytes.fromhex(line.strip().removeprefix(":")) if line.startswith(":") else b""
        except ValueError:
            record = b""
        if len(record) < 5 or len(record) != record[0] + 5 or sum(record) % 256:
            raise ConfigError(f"{what} is not an Intel HEX file: line {number} is no record ({line[:24]!r})")
        ended = ended or record[3] == 1
    if not ended:
        raise ConfigError(f"{what} is not a whole Intel HEX file: it has no end-of-file record (cut short?)")


def _check_vector_table(head: bytes, what: str) -> None:
    """A raw Cortex-M binary begins with its vector table: the initial stack pointer (word-aligned)
    and the reset handler (a Thumb address: odd)."""
    if head[:4] == b"\x7fELF":
        raise ConfigError(f"{what} is an ELF file: name it .elf (pyocd tells the format by the name)")
    if len(head) < 8:
        raise ConfigError(f"{what} is not a Cortex-M binary: {len(head)} bytes, no vector table")
    stack, reset = struct.unpack("<II", head[:8])
    if stack == 0 or stack % 4 or not reset & 1:
        raise ConfigError(
            f"{what} is not a Cortex-M binary: it does not begin with a vector table (initial SP {stack:#010x}, "
            f"reset vector {reset:#010x}: a word-aligned stack and an odd Thumb address)"
        )


class ImageSource:
    """Resolves a configuration name to an image file, building it with `script <prefix><config>`
    when it does not exist yet."""

    def __init__(self, cfg: DutBase, script: Path, preset_prefix: str, built_path: Callable[[str], Path]) -> None:
        self.cfg = cfg
        self.script = script
        self.preset_prefix = preset_prefix
        self.built_path = built_path

    @property
    def default_config(self) -> str:
        return self.cfg.firmware.config or "default"

    def image(self, config: str | None = None) -> Path:
        fw = self.cfg.firmware
        if fw.image is not None and config in (None, self.default_config):
            if self.cfg.IMAGE_FORMAT is not None:
                check_image_file(fw.image, self.cfg.IMAGE_FORMAT, f"DUT {self.cfg.name}")
            elif not fw.image.is_file():
                raise ConfigError(f"DUT {self.cfg.name}: firmware image {fw.image} does not exist")
            return fw.image
        config = config or self.default_config
        path = self.built_path(config)
        if not path.is_file():
            self._build(config)
        return path

    def _build(self, config: str) -> None:
        preset = f"{self.preset_prefix}{config}"
        proc = subprocess.run([str(self.script), preset], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            reason = next((ln for ln in lines if "No such preset" in ln or "error" in ln.lower()), None)
            raise BenchError(
                f"DUT {self.cfg.name}: building firmware config {config!r} (preset {preset}) failed: "
                f"{(reason or (lines[-1] if lines else 'no output')).strip()}"
            )
