#!/usr/bin/env bash
# Builds every host DUT variant (one build directory per configuration, as ESP-IDF's
# build_<target>_<config>) and the sanitizer build with its unit tests and fuzz targets.
#   tools/build-host.sh            build every host preset (every configure preset of
#                                  CMakePresets.json whose FW_TARGET is host: tools/presets.py)
#   tools/build-host.sh PRESET...  build only these
set -euo pipefail
cd "$(dirname "$0")/.."
presets=("$@")
if [ ${#presets[@]} -eq 0 ]; then
  list=$(python3 tools/presets.py host)
  mapfile -t presets <<<"$list"
fi
for p in "${presets[@]}"; do
  echo "== firmware preset $p"
  cmake --preset "$p" >/dev/null
  cmake --build --preset "$p"
done
