#!/usr/bin/env bash
# Cross-builds the Cortex-M7 board images (Debian's arm-none-eabi-gcc): .elf, .bin, .hex and a
# size report per board.   tools/build-boards.sh [PRESET...]   (default: mps2-an500)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v arm-none-eabi-gcc >/dev/null || { echo "build-boards: arm-none-eabi-gcc not found (Debian package gcc-arm-none-eabi)" >&2; exit 2; }
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(mps2-an500)
for p in "${presets[@]}"; do
  echo "== firmware preset $p"
  cmake --preset "$p" >/dev/null
  cmake --build --preset "$p" | grep -E -A1 "^\s+text" || true
done
