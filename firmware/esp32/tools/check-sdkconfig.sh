#!/usr/bin/env bash
# Checks sdkconfig.defaults + each sdkconfig.ci.<config> without ESP-IDF: kconfgen (esp-idf-kconfig)
# against check/Kconfig (the ESP-IDF symbols they use and main/Kconfig.projbuild). Fails when a
# symbol is unknown or a value lies outside its range.
#   tools/check-sdkconfig.sh [CONFIG...]   (PYTHON: an interpreter with esp-idf-kconfig)
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
configs=("$@")
if [ ${#configs[@]} -eq 0 ]; then
  for f in sdkconfig.ci.*; do configs+=("${f#sdkconfig.ci.}"); done
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for c in "${configs[@]}"; do
  log=$("$python" -m kconfgen --kconfig check/Kconfig --env HIL_ESP32_DIR="$PWD" --config "$out/sdkconfig.$c" \
    --defaults sdkconfig.defaults --defaults "sdkconfig.ci.$c" --output config "$out/sdkconfig.$c" 2>&1)
  if grep -E "unknown kconfig symbol|ignored due to|warning|error" <<<"$log"; then
    echo "check-sdkconfig: $c: FAILED" >&2
    status=1
  else
    echo "check-sdkconfig: $c: ok"
  fi
done
exit $status
