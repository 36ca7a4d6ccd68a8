#!/usr/bin/env bash
# Builds the HTML report from results/allure-results with the pinned npm `allure` (Allure 3),
# keeping the history between runs in results/history/, then makes it offline (hil/report/finish.py).
#   report-generator/generate.sh [RESULTS_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=$(cd "${1:-$here/../results}" && pwd)
[ -d "$results/allure-results" ] || { echo "generate: no $results/allure-results (run the suite first)" >&2; exit 2; }
cd "$here"
[ -x node_modules/.bin/allure ] || npm ci --no-audit --no-fund --silent
mkdir -p "$results/history"
rm -rf "$results/report"   # allure 3 does not clean its output directory
HIL_RESULTS_DIR="$results" ALLURE_NO_ANALYTICS=true node_modules/.bin/allure generate "$results/allure-results" >/dev/null
# offline: no analytics script; the sortable summary beside index.html
(cd "$here/.." && .venv/bin/python -m hil.report.finish "$results")
echo "report: $results/report/index.html"
