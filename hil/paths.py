"""Where the project's files are."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
FIRMWARE_DIR = PROJECT_ROOT / "firmware"
FIRMWARE_BUILD_DIR = FIRMWARE_DIR / "build"
BUILD_HOST_SCRIPT = FIRMWARE_DIR / "tools" / "build-host.sh"
BUILD_BOARDS_SCRIPT = FIRMWARE_DIR / "tools" / "build-boards.sh"


def host_firmware(config: str) -> Path:
    """The host DUT program of a build configuration (one build directory per config)."""
    return FIRMWARE_BUILD_DIR / f"host-{config}" / "host" / "hil-fw-host"


def board_firmware(board: str, config: str, suffix: str = ".elf") -> Path:
    """A Cortex-M7 board image of a build configuration (preset `<board>-<config>`)."""
    return FIRMWARE_BUILD_DIR / f"{board}-{config}" / "cortex-m" / f"hil-fw-{board}{suffix}"
