"""The cross-built board images as a flasher sees them: the vector table at the flash base (the
initial stack pointer inside SRAM, a Thumb reset handler inside the image), and the image within
the part's flash and RAM. Reads the .bin/.elf the build produced (firmware/tools/build-boards.sh)."""

from __future__ import annotations

import struct
import subprocess
from dataclasses import dataclass

import pytest

from hil.paths import board_firmware

pytestmark = pytest.mark.selftest


@dataclass(frozen=True)
class Part:
    board: str
    flash_base: int
    flash_size: int
    ram_base: int
    ram_size: int


PARTS = [
    Part("same70-xplained", 0x0040_0000, 2048 * 1024, 0x2040_0000, 384 * 1024),  # ATSAME70Q21B
    Part("mps2-an500", 0x0000_0000, 4096 * 1024, 0x2000_0000, 4096 * 1024),  # QEMU's AN500 memory map
]


def sections(elf: str) -> dict[str, tuple[int, int]]:
    """name -> (address, size) from `arm-none-eabi-size -A`."""
    out = subprocess.run(["arm-none-eabi-size", "-A", elf], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            found[parts[0]] = (int(parts[2]), int(parts[1]))
    return found


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.board)
def test_vector_table_at_flash_base_and_image_fits_the_part(part: Part) -> None:
    elf = board_firmware(part.board, "default")
    image = board_firmware(part.board, "default", ".bin").read_bytes()
    assert elf.is_file(), f"{elf} not built (firmware/tools/build-boards.sh)"
    secs = sections(str(elf))
    assert secs[".vectors" if ".vectors" in secs else ".text"][0] == part.flash_base
    initial_sp, reset = struct.unpack_from("<II", image, 0)
    assert part.ram_base < initial_sp <= part.ram_base + part.ram_size and initial_sp % 8 == 0
    assert reset & 1, "the reset vector must have the Thumb bit set"
    assert part.flash_base <= reset & ~1 < part.flash_base + len(image)
    in_flash = [s for s, (addr, _) in secs.items() if part.flash_base <= addr < part.flash_base + part.flash_size]
    in_ram = {s: (a, n) for s, (a, n) in secs.items() if part.ram_base <= a < part.ram_base + part.ram_size}
    assert len(image) <= part.flash_size and in_flash
    ram_end = max(a + n for a, n in in_ram.values())
    assert ram_end <= part.ram_base + part.ram_size, f"RAM overflows by {ram_end - part.ram_base - part.ram_size} B"
    print(f"{part.board}: flash {len(image)} of {part.flash_size} B, RAM up to +{ram_end - part.ram_base} B")
