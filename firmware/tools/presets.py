#!/usr/bin/env python3
"""Lists the firmware's build configurations as CMakePresets.json declares them, one a line, in
the file's order: every configure preset that is not hidden and whose FW_TARGET (its own
cacheVariables or those of the presets it inherits, CMake's default "host" when none sets it) is
  host    the host DUT (tools/build-host.sh)
  boards  a Cortex-M7 board (anything but host; tools/build-boards.sh)
Each must have a build preset of the same name (the scripts run `cmake --build --preset NAME`).
Standard library only: it runs before `./suite setup` has made the project's virtualenv.
  python3 tools/presets.py host|boards
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PRESETS_FILE = Path(__file__).resolve().parent.parent / "CMakePresets.json"


def fail(message: str) -> None:
    sys.exit(f"presets: {PRESETS_FILE}: {message}")


def main(argv: list[str]) -> None:
    if len(argv) != 1 or argv[0] not in ("host", "boards"):
        sys.exit("usage: tools/presets.py host|boards")
    want_host = argv[0] == "host"
    try:
        data = json.loads(PRESETS_FILE.read_text())
        configure = {p["name"]: p for p in data["configurePresets"]}
        build = {p["name"] for p in data.get("buildPresets", [])}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        fail(f"cannot read the presets ({exc})")

    def target(name: str, seen: tuple[str, ...] = ()) -> str | None:
        """FW_TARGET as CMake resolves it: the preset's own value, else its parents' in order."""
        if name in seen or name not in configure:
            fail(f"preset {name!r} is missing or inherits itself")
        preset = configure[name]
        value = preset.get("cacheVariables", {}).get("FW_TARGET")
        if value is not None:
            return str(value["value"] if isinstance(value, dict) else value)
        parents = preset.get("inherits", [])
        for parent in [parents] if isinstance(parents, str) else parents:
            found = target(parent, (*seen, name))
            if found is not None:
                return found
        return None

    names = [
        name
        for name, preset in configure.items()
        if not preset.get("hidden") and ((target(name) or "host") == "host") == want_host
    ]
    if not names:
        fail(f"no {argv[0]} configure preset")
    missing = [n for n in names if n not in build]
    if missing:
        fail(f"configure presets without a build preset of the same name: {', '.join(missing)}")
    print("\n".join(names))


if __name__ == "__main__":
    main(sys.argv[1:])
