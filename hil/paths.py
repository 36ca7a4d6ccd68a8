"""Where the project's files are."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# the firmware a run builds and measures: the checkout's, or another commit's checked out
# elsewhere (./suite bisect sets HIL_FIRMWARE_DIR to a worktree's firmware directory)
FIRMWARE_DIR_ENV = "HIL_FIRMWARE_DIR"
FIRMWARE_DIR = Path(os.environ.get(FIRMWARE_DIR_ENV) or PROJECT_ROOT / "firmware").resolve()
FIRMWARE_BUILD_DIR = FIRMWARE_DIR / "build"
BUILD_HOST_SCRIPT = FIRMWARE_DIR / "tools" / "build-host.sh"
BUILD_BOARDS_SCRIPT = FIRMWARE_DIR / "tools" / "build-boards.sh"


def firmware_dir_problem() -> str | None:
    """What is wrong with $HIL_FIRMWARE_DIR, if it is set to something that is not a firmware tree."""
    if os.environ.get(FIRMWARE_DIR_ENV) and not (FIRMWARE_DIR / "CMakePresets.json").is_file():
        return f"{FIRMWARE_DIR_ENV}={os.environ[FIRMWARE_DIR_ENV]}: not a firmware directory (no CMakePresets.json)"
    return None


def host_firmware(config: str) -> Path:
    """The host DUT program of a build configuration (one build directory per config)."""
    return FIRMWARE_BUILD_DIR / f"host-{config}" / "host" / "hil-fw-host"


def board_firmware(board: str, config: str, suffix: str = ".elf") -> Path:
    """A Cortex-M7 board image of a build configuration (preset `<board>-<config>`)."""
    return FIRMWARE_BUILD_DIR / f"{board}-{config}" / "cortex-m" / f"hil-fw-{board}{suffix}"
