"""What a scenario records, as its family declares it (hil.scenarios.contract.Family.shapes): the
shape of its case ids and the metrics of its records; the threshold catalogue
(hil.scenarios.catalog) is made of them. The metric sets here are those of a record's kind
(hil.results.recorder.CaseRecord.metrics)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hil.config.thresholds import CASE_DIRECTIONS

# the DUT's own side of a measurement, where its console reports it (hil.results.dut_side)
DUT_SIDE = frozenset(
    {"dut_cpu_pct", "dut_tcp_retrans", "dut_tcp_ooseq", "dut_tcp_rx_dup", "dut_tcp_segs_sent", "dut_tcp_segs_received",
     "pool_free", "heap_free"}
)  # fmt: skip
# RFC 6349's figures of a TCP record (hil.scenarios.rfc6349), with the baseline they stand on
TCP_6349 = frozenset({"ttr", "tcp_efficiency_pct", "buffer_delay_pct", "baseline_rtt_ms", "loaded_rtt_ms", "bdp_bytes"})
# what every throughput record carries (hil.results.recorder.CaseRecord.metrics)
THROUGHPUT = frozenset({"mbps", "sd_mbps", "efficiency_pct"}) | DUT_SIDE | TCP_6349
UDP = frozenset({"loss_pct", "jitter_ms", "loss_from_bytes"})
# a generator's own figures (hil.traffic.endpoints.iperf3_details)
IPERF3 = frozenset({"retransmits", "max_cwnd_bytes", "max_rtt_ms", "mean_rtt_ms", "cpu_local_pct", "cpu_remote_pct"})
TIMES = frozenset({"median_ms", "sd_ms", "latency_ms"})
PING = TIMES | {"avg_ms", "p99_ms", "loss_pct"}
STREAM = frozenset(
    {"loss_pct", "sent", "received", "lost", "outoforder", "late", "send_errors", "lossy_bursts", "generator_behind",
     "duplicates"}
)  # fmt: skip
RECONNECT = TIMES | {"ping_recovery_ms", "tcp_recovery_ms", "reset_ms", "reset_gap_ms", "reset_beyond_outage_ms"}

DIRECTION = r"(?:dut_rx|dut_tx|uplink|downlink)"  # hil.directions: an endpoint DUT's or an in-path DUT's
SIZE = r"\d+[kKmMgG]?"
CONFIG = r"[a-z][a-z0-9_]*"  # a firmware build configuration (default, wnd4, mss536)
HOSTS = r"[a-z0-9]+_to_[a-z0-9]+"  # a ping's direction, e.g. pc_to_dut, peer_to_pc


@dataclass(frozen=True)
class ScenarioShape:
    name: str  # the threshold profile's scenario key, or a pattern of keys (stress-<profile>)
    cases: str  # the case ids' pattern, e.g. "dut_rx-l64"
    metrics: frozenset[str]
    example: str  # a case id, for messages
    pattern: bool = False  # `name` is a regular expression
    trend: bool = False  # a ladder of builds: a threshold file's `trends:` entry may shape it

    def matches(self, scenario: str) -> bool:
        return re.fullmatch(self.name, scenario) is not None if self.pattern else scenario == self.name

    def case_ok(self, case: str) -> bool:
        if case in CASE_DIRECTIONS:  # a direction's entry: where the scenario's cases carry one
            return DIRECTION in self.cases
        return case == "default" or re.fullmatch(self.cases, case) is not None
