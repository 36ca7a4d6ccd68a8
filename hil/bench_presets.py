"""The firmware build presets a bench file's DUTs run on, for `./suite ci`'s set-up to build only
those (a CI job's fresh workspace builds what its bench needs, not every board's images): every
configure preset of the project's firmware with a DUT kind's prefix (`host-` for the virtual DUT,
its bridge build and stock-console personalities included; `mps2-an500-` for QEMU;
`same70-xplained-` for the SAME70), none for a DUT whose firmware is not the project's (an image
path, an ESP-IDF build, a black box), the unit tests' sanitizer build `host-asan` never (the test
command's unit tests and fuzzing build it; the `host-planted` defect build, also sanitized, is a
robustness option of any virtual-bench job, `--robustness-build planted`, and is built).

    python -m hil.bench_presets BENCH_FILE    one preset per line; exit 4 on a bad bench file
    python -m hil.bench_presets --esp-idf BENCH_FILE
                                             the ESP-IDF builds its ESP32 DUTs run on the project's
                                             firmware, "TARGET CONFIG" a line (none for a stock
                                             example's build or an image)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hil.config.errors import ConfigError
from hil.config.sections import ESP32_PROJECT_DIR
from hil.dut import qemu, same70, virtual
from hil.dut.bench_file import load_bench
from hil.dut.presets import PRESETS_FILE
from hil.exit_codes import ExitCode

PREFIXES = {"virtual": virtual.PRESET_PREFIX, "qemu": qemu.PRESET_PREFIX, "same70": same70.PRESET_PREFIX}
TEST_BUILDS = {"host-asan"}


def bench_presets(bench: Path) -> list[str]:
    names = [p["name"] for p in json.loads(PRESETS_FILE.read_text())["configurePresets"] if not p.get("hidden")]
    wanted: list[str] = []
    for dut in load_bench(bench).duts:
        prefix = PREFIXES.get(getattr(dut, "kind", ""))
        if prefix is None or dut.firmware.image is not None:
            continue
        wanted += [n for n in names if n.startswith(prefix) and n not in TEST_BUILDS and n not in wanted]
    return wanted


def esp_idf_builds(bench: Path) -> list[str]:
    """ "TARGET CONFIG" for every ESP-IDF build of the project's firmware the bench's DUTs flash."""
    wanted: list[str] = []
    for dut in load_bench(bench).duts:
        idf = getattr(dut, "idf", None)
        if idf is None or getattr(dut, "stock_firmware", False) or idf.project_dir != ESP32_PROJECT_DIR:
            continue
        wanted += [line for c in dut.build_configs if (line := f"{idf.target} {c}") not in wanted]
    return wanted


def main(argv: list[str]) -> int:
    esp_idf = argv[:1] == ["--esp-idf"]
    argv = argv[1:] if esp_idf else argv
    if len(argv) != 1:
        print("usage: python -m hil.bench_presets [--esp-idf] BENCH_FILE", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    try:
        print("\n".join((esp_idf_builds if esp_idf else bench_presets)(Path(argv[0]))))
    except ConfigError as exc:
        print(f"bench_presets: {exc}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    return ExitCode.PASSED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
