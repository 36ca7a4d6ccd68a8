"""A synthetic ESP-IDF build directory, laid out as ESP-IDF v5 writes it: flasher_args.json,
config/sdkconfig.json and the images (bootloader, partition table, app, ELF)."""

from __future__ import annotations

import json
from pathlib import Path

FLASHER_ARGS = {
    "write_flash_args": ["--flash_mode", "dio", "--flash_size", "4MB", "--flash_freq", "40m"],
    "flash_settings": {"flash_mode": "dio", "flash_size": "4MB", "flash_freq": "40m"},
    "flash_files": {
        "0x1000": "bootloader/bootloader.bin",
        "0x10000": "hil-fw.bin",
        "0x8000": "partition_table/partition-table.bin",
    },
    "bootloader": {"offset": "0x1000", "file": "bootloader/bootloader.bin", "encrypted": "false"},
    "app": {"offset": "0x10000", "file": "hil-fw.bin", "encrypted": "false"},
    "partition-table": {"offset": "0x8000", "file": "partition_table/partition-table.bin", "encrypted": "false"},
    "extra_esptool_args": {"after": "hard_reset", "before": "default_reset", "stub": True, "chip": "esp32"},
}


def make_build(project: Path, name: str, target: str = "esp32", variant: str = "default") -> Path:
    build = project / name
    for rel in ("bootloader/bootloader.bin", "partition_table/partition-table.bin", "hil-fw.bin", "hil-fw.elf"):
        (build / rel).parent.mkdir(parents=True, exist_ok=True)
        (build / rel).write_bytes(b"\xe9" + bytes(15))
    (build / "flasher_args.json").write_text(json.dumps(FLASHER_ARGS, indent=4))
    (build / "config").mkdir()
    sdkconfig = {"IDF_TARGET": target, "HIL_FW_VARIANT": variant, "LWIP_TCP_WND_DEFAULT": 5760}
    (build / "config" / "sdkconfig.json").write_text(json.dumps(sdkconfig))
    return build
