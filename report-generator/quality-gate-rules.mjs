// The HIL suite's own Allure 3 quality-gate rules (used by allurerc.mjs, run by quality-gate.sh).
//
// An Allure 3 rule is { rule, message, successMessage?, validate }. `validate` gets
// { expected, trs, metrics, previousHistory, state, environment }: `expected` is the value given to
// the rule in `qualityGate.rules`, `trs` the test results (retries, muted and accepted known
// issues already left out), `metrics` every performance-metric sample Allure read from the
// *-perf.json files (invalid or non-finite samples dropped). It returns
// { success, actual, testResults }, and `message({ actual, expected })` says what failed: keep it
// one line, quality-gate.sh prints one line per failed rule.
import { readFileSync } from "node:fs";
import { join } from "node:path";

// The suite writes every number of a case as `<scenario>/<case>/<metric>` (hil/results/recorder.py).
const hilMetricName = (key) => {
  const parts = key.split("/");
  return parts.length === 3 ? parts[2] : undefined;
};

// The latest sample of every HIL metric key: a case measured twice in a run counts as its last
// measurement, as in results.jsonl (Recorder.latest).
const latestHilMetrics = (metrics = []) => {
  const latest = new Map();
  for (const m of metrics) {
    if (hilMetricName(m.key) === undefined) continue;
    const seen = latest.get(m.key);
    if (!seen || m.stop >= seen.stop) latest.set(m.key, m);
  }
  return latest;
};

// The latest run of a results.jsonl (the file is appended run after run; the allure-results
// directory is cleaned each run): each case's latest measurement line and its verdict.
export const readLatestRun = (resultsDir) => {
  const lines = readFileSync(join(resultsDir, "results.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
  const run = lines.filter((l) => l && l.run !== undefined).at(-1)?.run;
  const cases = new Map();
  for (const l of lines) {
    if (l.run !== run || typeof l.scenario !== "string" || typeof l.case !== "string") continue;
    const id = `${l.scenario}/${l.case}`;
    if ("unit" in l) cases.set(id, { ...l, verdict: "recorded" });
    else if ("verdict" in l && cases.has(id)) {
      cases.get(id).verdict = l.verdict;
      if (l.threshold) cases.get(id).threshold = l.threshold; // the limits it was checked against
    }
  }
  return { run, cases };
};

// The metrics every measured case must have in the Allure results: its number in its unit, and
// its efficiency and loss when the case has them (the Metrics page, its trends and the
// efficiency rule below read them).
const expectedMetricNames = (rec) => [
  ...(rec.unit === "Mbit/s" ? ["mbps"] : rec.unit === "ms" ? ["latency_ms"] : []),
  ...(rec.efficiency_pct != null ? ["efficiency_pct"] : []),
  ...(rec.loss_pct != null ? ["loss_pct"] : []),
];

const list = (items, max = 12) =>
  items.length > max ? `${items.slice(0, max).join(", ")}, ... (${items.length} in all)` : items.join(", ");

// hilMetricsRecorded: RESULTS_DIR (expected). Fails when the run recorded no metric at all, when
// RESULTS_DIR/results.jsonl is missing or has no case, or when a case of its latest run lacks one
// of its metrics (or has it non-finite: Allure drops such samples) in the Allure results.
export const hilMetricsRecordedRule = {
  rule: "hilMetricsRecorded",
  message: ({ actual }) => `metrics not recorded: ${actual}`,
  successMessage: ({ actual }) => actual,
  validate: async ({ expected: resultsDir, metrics }) => {
    const latest = latestHilMetrics(metrics);
    const problems = [];
    if (latest.size === 0) problems.push("no <scenario>/<case>/<metric> performance metric in the Allure results");
    let run;
    let cases = new Map();
    try {
      ({ run, cases } = readLatestRun(resultsDir));
    } catch (err) {
      problems.push(`cannot read ${join(resultsDir, "results.jsonl")}: ${err.message.split("\n")[0]}`);
    }
    if (run !== undefined && cases.size === 0) problems.push(`run ${run} of results.jsonl measured no case`);
    const missing = [];
    for (const [id, rec] of cases) {
      for (const name of expectedMetricNames(rec)) {
        if (!latest.has(`${id}/${name}`)) missing.push(`${id}/${name}`);
      }
    }
    if (missing.length) problems.push(`missing ${list(missing)}`);
    return {
      success: problems.length === 0,
      actual: problems.length
        ? problems.join("; ")
        : `${latest.size} metrics, every metric of the ${cases.size} cases of run ${run} present`,
      testResults: [],
    };
  },
};

// Verdicts of results.jsonl whose numbers say nothing about the DUT or are not gated on purpose:
// bench faults (xfailed under --bench-fault xfail, failed otherwise) and cases measured for the
// record only (`no_criterion` in the threshold profile, e.g. numbers that follow the host's CPU).
export const NOT_GATED_VERDICTS = new Set(["generator-limited", "tester-limited", "no criterion"]);

// hilMinEfficiency: { floorPct, exempt, resultsDir } (expected; floorPct a number or numeric
// string, 0 for none; exempt a regex source over `scenario/case`, "" for none). Fails when the
// latest `<scenario>/<case>/efficiency_pct` of a case in the Allure results is below its floor,
// naming each key, value and floor. A case's floor is the higher of floorPct (a team-wide floor,
// off by default) and the case's own `min_efficiency_pct` as results.jsonl recorded it: the
// report's numbers are checked against the criteria the run itself recorded, on any bench (a
// Wi-Fi or QEMU profile's low limits are its own). Cases whose verdict in results.jsonl is in
// NOT_GATED_VERDICTS, and cases whose id matches `exempt`, are left out. Settings that do not
// parse fail the rule (not the config: a bad setting must not stop `allure generate`).
export const hilMinEfficiencyRule = {
  rule: "hilMinEfficiency",
  message: ({ actual }) => actual,
  successMessage: ({ actual }) => actual,
  validate: async ({ expected, metrics }) => {
    const fail = (actual) => ({ success: false, actual, testResults: [] });
    const floorPct = Number(expected.floorPct);
    if (String(expected.floorPct).trim() === "" || !Number.isFinite(floorPct)) {
      return fail(`efficiency floor is not a number: ${JSON.stringify(expected.floorPct)}`);
    }
    let exempt;
    try {
      exempt = expected.exempt ? new RegExp(expected.exempt) : undefined;
    } catch (err) {
      return fail(`efficiency exemption is not a regex: ${err.message}`);
    }
    let cases = new Map();
    try {
      cases = readLatestRun(expected.resultsDir).cases;
    } catch {
      // hilMetricsRecorded says so; the team-wide floor still applies
    }
    const below = [];
    let gated = 0;
    for (const [key, m] of latestHilMetrics(metrics)) {
      if (hilMetricName(key) !== "efficiency_pct") continue;
      const id = key.slice(0, -"/efficiency_pct".length);
      const rec = cases.get(id);
      if (NOT_GATED_VERDICTS.has(rec?.verdict) || exempt?.test(id)) continue;
      const own = Number(rec?.threshold?.min_efficiency_pct ?? 0);
      const floor = Math.max(floorPct, Number.isFinite(own) ? own : 0);
      if (floor <= 0) continue;
      gated += 1;
      if (m.value < floor) below.push(`${key}=${m.value} (floor ${floor} %)`);
    }
    below.sort();
    const team = floorPct > 0 ? `, team-wide floor ${floorPct} %` : "";
    return {
      success: below.length === 0,
      actual: below.length
        ? `efficiency below its floor: ${list(below)}`
        : `${gated} efficiencies at or above their floor (the case's min_efficiency_pct${team})`,
      testResults: [],
    };
  },
};
