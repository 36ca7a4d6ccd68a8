// Allure 3 configuration of the HIL suite's HTML report and its quality gate.
// Run from this directory (where the pinned `allure` package resolves):
//   npx allure generate <results>/allure-results       (report-generator/generate.sh)
//   report-generator/quality-gate.sh <results>                    (the CI gate: allure quality-gate, Node 20 safe)
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "allure";
import { qualityGateDefaultRules } from "allure/rules";
import { hilMetricsRecordedRule, hilMinEfficiencyRule } from "./quality-gate-rules.mjs";

const results = process.env.HIL_RESULTS_DIR ?? "../results";

// `allure quality-gate` runs the whole report pipeline but its plugins: it writes
// test-results.json and quality-gate.json to `output` and appends a point to `historyPath`. A gate
// run must leave the report and its history alone (a second point for the same run would be the
// "previous run" of the next report), so it gets a scratch output and no history.
const gateRun = process.argv[2] === "quality-gate";

// The quality gate: exit 1 from `allure quality-gate` when a rule fails (`allure generate` does not
// evaluate it; `allure run` would). Every case already checks its own limits from thresholds/*.yaml
// and fails below them, so the gate does not repeat those limits: it says whether the run as a
// whole may pass CI.
// (parsed by the rule: a bad setting fails the gate, it does not stop `allure generate`)
const floorPct = process.env.HIL_GATE_MIN_EFFICIENCY_PCT ?? "0";
const exempt = process.env.HIL_GATE_EFFICIENCY_EXEMPT ?? "";

const qualityGate = {
  // a custom rule needs `use`, which replaces the built-in list: keep the built-ins
  use: [...qualityGateDefaultRules, hilMetricsRecordedRule, hilMinEfficiencyRule],
  rules: [
    // no real failure: failed and broken tests count (a DUT below its threshold, a DUT or bench
    // fault, a broken fixture); skipped ones do not, nor xfailed (allure-pytest reports them as
    // skipped: a bench fault under --bench-fault xfail), nor retries or muted known issues
    { maxFailures: 0 },
    // the run ran something: at least one test passed, failed or broke (a run that skipped
    // everything, e.g. no DUT, or collected nothing must not pass)
    { id: "executed", filter: (tr) => ["passed", "failed", "broken"].includes(tr.status), minTestsCount: 1 },
    {
      // the numbers are there: metrics at all, and every metric of every case in results.jsonl
      // (latest run) in the Allure results
      hilMetricsRecorded: results,
      // every case's efficiency (median against its theory: the link's goodput, the window / RTT,
      // the offered rate) in the report's metrics at or above its floor: the case's own
      // min_efficiency_pct as results.jsonl recorded it (a cross-check of the report's numbers
      // against the run's recorded criteria, right on any bench), raised to a team-wide floor by
      // HIL_GATE_MIN_EFFICIENCY_PCT (off by default: limits belong in thresholds/*.yaml). Not
      // gated: bench faults and no-criterion cases, and cases matching HIL_GATE_EFFICIENCY_EXEMPT
      // (a regex over `scenario/case`).
      hilMinEfficiency: { floorPct, exempt, resultsDir: results },
    },
  ],
};

export default defineConfig({
  name: "HIL network performance",
  output: gateRun ? (process.env.HIL_GATE_OUTPUT ?? join(tmpdir(), "hil-quality-gate")) : `${results}/report`,
  ...(gateRun ? {} : { historyPath: `${results}/history/allure-history.jsonl` }),
  historyLimit: 50,
  qualityGate,
  plugins: {
    awesome: {
      options: {
        reportName: "HIL network performance",
        singleFile: false,
        reportLanguage: "en",
        groupBy: ["epic", "feature", "story"],
      },
    },
  },
  categories: {
    rules: [
      {
        name: "Below threshold",
        matchers: { statuses: ["failed"], message: /BELOW THRESHOLD/ },
      },
      {
        name: "Regression against the baseline",
        matchers: { statuses: ["failed"], message: /REGRESSION against the baseline/ },
      },
      {
        name: "DUT fault",
        matchers: [{ statuses: ["failed", "broken"], message: /DutError|ConsoleTimeout|DUT fault/ }],
      },
      {
        name: "Bench fault",
        matchers: [{ statuses: ["failed", "broken"], message: /BenchError|ConfigError|BENCH FAULT/ }],
      },
    ],
  },
});
