#!/usr/bin/env bash
# Builds hil-fw for ESP-IDF v5.x, one build directory per configuration as ESP-IDF's CI lays them
# out (build_<target>_<config>: flasher_args.json, config/sdkconfig.json and
# project_description.json for pytest-embedded-idf).
#   tools/build.sh [--target esp32] [CONFIG...]    (default: every sdkconfig.ci.* configuration)
# Needs idf.py on PATH (source ESP-IDF's export.sh first).
set -euo pipefail
cd "$(dirname "$0")/.."
target=esp32
configs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="${2:?--target needs a value}"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) configs+=("$1"); shift ;;
  esac
done
command -v idf.py >/dev/null || { echo "build.sh: idf.py not found: source ESP-IDF v5.x's export.sh first" >&2; exit 2; }
if [ ${#configs[@]} -eq 0 ]; then
  for f in sdkconfig.ci.*; do configs+=("${f#sdkconfig.ci.}"); done
fi
for c in "${configs[@]}"; do
  [ -f "sdkconfig.ci.$c" ] || { echo "build.sh: no sdkconfig.ci.$c" >&2; exit 2; }
  dir="build_${target}_${c}"
  echo "== $dir"
  # a fresh sdkconfig per build: the defaults files decide every value. IDF_TARGET as a CMake
  # definition is what `idf.py set-target` does, without its full clean of the directory.
  rm -f "$dir/sdkconfig"
  idf.py -B "$dir" -D IDF_TARGET="$target" -D SDKCONFIG="$dir/sdkconfig" \
    -D SDKCONFIG_DEFAULTS="sdkconfig.defaults;sdkconfig.ci.$c" build
done
