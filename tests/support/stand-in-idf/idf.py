#!/usr/bin/env python3
"""A stand-in for ESP-IDF's idf.py, for the tests of the wiring around an ESP-IDF build on a PC
without ESP-IDF (tests/suite/test_esp32_ci_job.py): `idf.py -B DIR -D IDF_TARGET=T -D
SDKCONFIG_DEFAULTS="a;b" ... build` writes DIR laid out as ESP-IDF v5 writes it (flasher_args.json,
config/sdkconfig.json, the images), the configuration's name read from its defaults files as
ESP-IDF would set it. The images are 16 bytes of nothing: no board can run them. It logs each
call to $STAND_IN_IDF_LOG when set, with the environment variables a build could read."""

import json
import os
import re
import sys
from pathlib import Path

FLASH_FILES = {"0x1000": "bootloader/bootloader.bin", "0x8000": "partition_table/partition-table.bin",
               "0x10000": "hil-fw.bin"}  # fmt: skip


def main(argv: list[str]) -> int:
    build_dir, defines = Path("build"), {}
    args = iter(argv)
    for arg in args:
        if arg == "-B":
            build_dir = Path(next(args))
        elif arg == "-D":
            key, _, value = next(args).partition("=")
            defines[key] = value.strip('"')
    if "build" not in argv:
        print(f"stand-in idf.py: only `build` is made here (got {argv})", file=sys.stderr)
        return 2
    config: dict[str, object] = {"IDF_TARGET": defines.get("IDF_TARGET", "esp32")}
    for defaults in filter(None, defines.get("SDKCONFIG_DEFAULTS", "").split(";")):
        for line in Path(defaults).read_text().splitlines():
            if m := re.match(r"^CONFIG_([A-Z0-9_]+)=(.*)$", line):
                config[m.group(1)] = m.group(2).strip('"')
    for rel in [*FLASH_FILES.values(), "hil-fw.elf"]:
        (build_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (build_dir / rel).write_bytes(b"\xe9" + bytes(15))
    flasher_args = {
        "write_flash_args": ["--flash_mode", "dio", "--flash_size", "4MB", "--flash_freq", "40m"],
        "flash_settings": {"flash_mode": "dio", "flash_size": "4MB", "flash_freq": "40m"},
        "flash_files": FLASH_FILES,
        "app": {"offset": "0x10000", "file": "hil-fw.bin", "encrypted": "false"},
        "extra_esptool_args": {"after": "hard_reset", "before": "default_reset", "stub": True,
                               "chip": config["IDF_TARGET"]},
    }  # fmt: skip
    (build_dir / "flasher_args.json").write_text(json.dumps(flasher_args, indent=4))
    (build_dir / "config").mkdir(exist_ok=True)
    (build_dir / "config" / "sdkconfig.json").write_text(json.dumps(config))
    if log := os.environ.get("STAND_IN_IDF_LOG"):
        with open(log, "a") as f:
            f.write(f"build {build_dir} target={config['IDF_TARGET']} variant={config.get('HIL_FW_VARIANT')}\n")
    print(f"stand-in idf.py: wrote {build_dir} (not ESP-IDF: nothing a board can run)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
