#!/usr/bin/env bash
# The CI quality gate of a run: `allure quality-gate` (pinned npm `allure`, rules in allurerc.mjs
# and quality-gate-rules.mjs) over RESULTS_DIR/allure-results and RESULTS_DIR/results.jsonl.
#   report-generator/quality-gate.sh RESULTS_DIR
# Prints one line per failed rule (`FAILED <rule>: <message>`) or `PASSED ...`, writes the same to
# RESULTS_DIR/quality-gate.txt. Exit: 0 passed, 1 failed, 2 usage error (no such results dir),
# 3 the gate itself could not run (allure crashed: its own exit 1 is not a verdict).
# Environment: HIL_GATE_MIN_EFFICIENCY_PCT (a team-wide efficiency floor over every case's own
# min_efficiency_pct; default 0: off), HIL_GATE_EFFICIENCY_EXEMPT (regex over `scenario/case` skipped).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: report-generator/quality-gate.sh RESULTS_DIR   (a directory with allure-results/ and results.jsonl)" >&2; exit 2; }
[ $# -eq 1 ] || usage
[ -d "$1" ] || { echo "quality-gate: no directory $1" >&2; usage; }
results=$(cd "$1" && pwd)
[ -d "$results/allure-results" ] || { echo "quality-gate: no $results/allure-results (run the suite first)" >&2; exit 2; }
cd "$here"
[ -x node_modules/.bin/allure ] && [ -d node_modules/core-js ] || npm ci --no-audit --no-fund --silent

scratch=$(mktemp -d)   # allure writes test-results.json and quality-gate.json to its output
trap 'rm -rf "$scratch"' EXIT
rc=0
# NO_COLOR: plain messages; the --require: Iterator helpers for Node 20 (iterator-helpers.cjs)
HIL_RESULTS_DIR="$results" HIL_GATE_OUTPUT="$scratch/out" ALLURE_NO_ANALYTICS=true NO_COLOR=1 FORCE_COLOR=0 \
  NODE_OPTIONS="--require \"$here/iterator-helpers.cjs\" ${NODE_OPTIONS:-}" \
  node_modules/.bin/allure quality-gate --config allurerc.mjs "$results/allure-results" >"$scratch/log" 2>&1 || rc=$?

# allure prints each failed rule as " ⨯ <message padded>    <rule>" (the rule name last)
sed 's/\x1b\[[0-9;]*m//g' "$scratch/log" \
  | sed -n 's/^ ⨯ \(.*[^ ]\) \{4,\}\([^ ]*\)$/FAILED \2: \1/p' >"$scratch/failed"
if [ "$rc" -eq 0 ]; then
  team=""
  [ "${HIL_GATE_MIN_EFFICIENCY_PCT:-0}" = 0 ] || team=", team-wide floor $HIL_GATE_MIN_EFFICIENCY_PCT %"
  echo "PASSED quality gate of $results: maxFailures 0, executed/minTestsCount 1, hilMetricsRecorded, hilMinEfficiency (each case's own floor$team${HIL_GATE_EFFICIENCY_EXEMPT:+; exempt: $HIL_GATE_EFFICIENCY_EXEMPT})" \
    >"$scratch/verdict"
elif [ "$rc" -eq 1 ] && [ -s "$scratch/failed" ]; then
  cp "$scratch/failed" "$scratch/verdict"
else
  { echo "ERROR the quality gate could not run (allure exit $rc):"; sed 's/\x1b\[[0-9;]*m//g' "$scratch/log" | tail -n 20; } >"$scratch/verdict"
  rc=3
fi
cp "$scratch/verdict" "$results/quality-gate.txt"
cat "$scratch/verdict"
exit "$rc"
