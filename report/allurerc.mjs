// Allure 3 configuration of the HIL suite's HTML report.
// Run from this directory (where the pinned `allure` package resolves):
//   npx allure generate <results>/allure-results
import { defineConfig } from "allure";

const results = process.env.HIL_RESULTS_DIR ?? "../results";

export default defineConfig({
  name: "HIL network performance",
  output: `${results}/report`,
  historyPath: `${results}/history/allure-history.jsonl`,
  historyLimit: 50,
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
