// Allure 3.18's `allure quality-gate` calls Iterator helpers (Map#values().toArray(), in Node 22
// and later). On Node 20 it dies with "toArray is not a function" and exit 1, the exit code of a
// failed gate. quality-gate.sh loads this file first (NODE_OPTIONS=--require): core-js (pinned in
// package.json) adds the ES Iterator helpers where they are missing; Node 22 keeps its own.
if (typeof Iterator === "undefined" || typeof Iterator.prototype.toArray !== "function") {
  require("core-js/es/iterator");
}
