"""The build configurations of the project's firmware as its build system declares them
(firmware/CMakePresets.json): the DUT window and MSS ladders are read from there, not repeated.

A configure preset `<prefix><config>` (e.g. `host-wnd4`) sets FW_TCP_WND_MSS and FW_TCP_MSS in its
cacheVariables, directly or through the presets it inherits. Configs named `wnd<k>` and `default`
make the window ladder, `mss<n>` and `default` the MSS builds (the ESP32 project's
sdkconfig.ci.<config> files follow the same naming: hil.dut.esp32).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from hil.errors import BenchError
from hil.paths import FIRMWARE_DIR

PRESETS_FILE = FIRMWARE_DIR / "CMakePresets.json"

Ladder = tuple[tuple[str, int], ...]


@cache
def _cache_variables(path: Path) -> dict[str, dict[str, str]]:
    """Every configure preset's cacheVariables with those of the presets it inherits."""
    try:
        presets = {p["name"]: p for p in json.loads(path.read_text())["configurePresets"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BenchError(f"{path}: cannot read the firmware's configure presets ({exc})") from None

    def resolve(name: str, seen: tuple[str, ...] = ()) -> dict[str, str]:
        if name in seen or name not in presets:
            raise BenchError(f"{path}: preset {name!r} is missing or inherits itself")
        p = presets[name]
        parents = p.get("inherits", [])
        out: dict[str, str] = {}
        for parent in [parents] if isinstance(parents, str) else parents:
            out.update(resolve(parent, (*seen, name)))
        out.update({k: str(v) for k, v in p.get("cacheVariables", {}).items()})
        return out

    return {name: resolve(name) for name, p in presets.items() if not p.get("hidden")}


Builds = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


def builds(prefix: str, path: Path = PRESETS_FILE) -> Builds:
    """Every build configuration of the presets named `<prefix><config>` with the stack settings
    its preset gives (FW_* cache variables, those of the presets it inherits included), in the
    file's order: what the configuration studies (hil.scenarios.families.stack_study) choose from
    and write out."""
    return tuple(
        (name.removeprefix(prefix), tuple(sorted((k, v) for k, v in values.items() if k.startswith("FW_"))))
        for name, values in _cache_variables(path).items()
        if name.startswith(prefix)
    )


def ladders(prefix: str, path: Path = PRESETS_FILE) -> tuple[Ladder, Ladder]:
    """(config, TCP_WND in MSS) for the window ladder, in rising order, and (config, TCP_MSS) for
    the MSS builds, of the presets named `<prefix><config>`."""
    windows: list[tuple[int, str]] = []
    msses: list[tuple[int, str]] = []
    for name, values in _cache_variables(path).items():
        if not name.startswith(prefix):
            continue
        config = name.removeprefix(prefix)
        if "FW_TCP_WND_MSS" not in values or "FW_TCP_MSS" not in values:
            continue
        if config == "default" or config.startswith("wnd"):
            windows.append((int(values["FW_TCP_WND_MSS"]), config))
        if config == "default" or config.startswith("mss"):
            msses.append((int(values["FW_TCP_MSS"]), config))
    if not windows:
        raise BenchError(f"{path}: no firmware preset {prefix}default (or {prefix}wnd<k>) to build a DUT from")
    return tuple((c, k) for k, c in sorted(windows)), tuple((c, m) for m, c in sorted(msses))
