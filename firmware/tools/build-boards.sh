#!/usr/bin/env bash
# Cross-builds the Cortex-M7 board images (Debian's arm-none-eabi-gcc): .elf, .bin, .hex, the
# linker's memory usage and a size report per build configuration.
#   tools/build-boards.sh            build every board preset (every configure preset of
#                                    CMakePresets.json whose FW_TARGET is a board: tools/presets.py)
#   tools/build-boards.sh PRESET...  build only these (e.g. mps2-an500-wnd2)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v arm-none-eabi-gcc >/dev/null || { echo "build-boards: arm-none-eabi-gcc not found (Debian package gcc-arm-none-eabi)" >&2; exit 2; }
presets=("$@")
if [ ${#presets[@]} -eq 0 ]; then
  list=$(python3 tools/presets.py boards)
  mapfile -t presets <<<"$list"
fi
for p in "${presets[@]}"; do
  echo "== firmware preset $p"
  # a build directory configured with a toolchain file that is no longer there (it moved from
  # same70/cmake/ to cortex-m/cmake/) is configured afresh: its cached system set-up includes it
  for system in build/"$p"/CMakeFiles/*/CMakeSystem.cmake; do
    [ -f "$system" ] || continue
    toolchain=$(sed -n 's/^include("\(.*\)")$/\1/p' "$system")
    if [ -n "$toolchain" ] && [ ! -f "$toolchain" ]; then rm -rf "build/$p/CMakeCache.txt" "build/$p/CMakeFiles"; fi
  done
  cmake --preset "$p" >/dev/null
  out=$(cmake --build --preset "$p" 2>&1) || { echo "$out" >&2; exit 1; }
  # the link's memory usage and the size report (the whole log when something warns)
  if grep -q "warning:" <<<"$out"; then echo "$out" >&2; echo "build-boards: $p built with warnings" >&2; exit 1; fi
  grep -E -A3 "Memory region|^\s+text" <<<"$out" || true
done
