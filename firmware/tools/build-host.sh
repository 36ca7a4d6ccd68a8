#!/usr/bin/env bash
# Builds every host DUT variant (one build directory per configuration, as ESP-IDF's
# build_<target>_<config>) and the sanitizer build with its unit tests and fuzz targets.
#   tools/build-host.sh            build all presets
#   tools/build-host.sh PRESET...  build only these
set -euo pipefail
cd "$(dirname "$0")/.."
presets=("$@")
if [ ${#presets[@]} -eq 0 ]; then
  presets=(host-default host-wnd2 host-wnd4 host-wnd16 host-mss536 host-bridge host-asan)
fi
for p in "${presets[@]}"; do
  echo "== firmware preset $p"
  cmake --preset "$p" >/dev/null
  cmake --build --preset "$p"
done
