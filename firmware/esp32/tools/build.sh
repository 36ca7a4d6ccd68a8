#!/usr/bin/env bash
# Builds hil-fw for ESP-IDF v5.x, one build directory per configuration as ESP-IDF's CI lays them
# out (build_<target>_<config>: flasher_args.json, config/sdkconfig.json and
# project_description.json for pytest-embedded-idf).
#   tools/build.sh [--target esp32] [--docker] [CONFIG...]  (default: every sdkconfig.ci.* configuration)
# Needs idf.py on PATH (source ESP-IDF's export.sh first), or with --docker Docker and Espressif's
# ESP-IDF image, pinned: $ESP_IDF_IMAGE (default below), the build run inside it on this checkout.
# ESP-IDF's compiler cache is on (IDF_CCACHE_ENABLE): a CI job's fresh checkout builds in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
ESP_IDF_IMAGE=${ESP_IDF_IMAGE:-espressif/idf:v5.3.2}
target=esp32
docker=0
configs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="${2:?--target needs a value}"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    --docker) docker=1; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) configs+=("$1"); shift ;;
  esac
done
if [ "$docker" = 1 ]; then
  command -v docker >/dev/null || { echo "build.sh: --docker: docker is not installed" >&2; exit 2; }
  repo=$(git rev-parse --show-toplevel)
  # the checkout mounted at the same path (git describe and CMake's paths as outside); the image's
  # entry point sources ESP-IDF's export.sh
  exec docker run --rm -v "$repo:$repo" -w "$PWD" -e IDF_CCACHE_ENABLE=1 \
    -e "CCACHE_DIR=$repo/firmware/esp32/.ccache" "$ESP_IDF_IMAGE" \
    bash -c 'git config --global --add safe.directory "*" && tools/build.sh "$@"' build.sh --target "$target" ${configs[@]+"${configs[@]}"}
fi
command -v idf.py >/dev/null || { echo "build.sh: idf.py not found: source ESP-IDF v5.x's export.sh first (or --docker)" >&2; exit 2; }
export IDF_CCACHE_ENABLE=${IDF_CCACHE_ENABLE:-1}
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
