"""What each scenario records: the shape of its case ids and the metrics of its records. A
threshold profile is checked against it before any bench comes up (`check_thresholds`), so a
misspelt metric (`min_mbsp`), scenario or case key is a configuration error naming the file and
the key, never a DUT failure found after the traffic ran.

A scenario's records carry the metrics of their kind (CaseRecord.metrics): a throughput case its
median (`mbps`), spread, efficiency, UDP loss and jitter, and what its generator adds (iperf 3:
retransmits, congestion window, RTT, CPU); a latency case its times and loss; a stream case its
counts. A new scenario or metric is one entry here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hil.config.errors import ConfigError
from hil.config.thresholds import ThresholdProfile

# what every throughput record carries (hil.results.recorder.CaseRecord.metrics)
THROUGHPUT = frozenset({"mbps", "sd_mbps", "efficiency_pct"})
UDP = frozenset({"loss_pct", "jitter_ms", "loss_from_bytes"})
# a generator's own figures (hil.traffic.endpoints.iperf3_details)
IPERF3 = frozenset({"retransmits", "max_cwnd_bytes", "max_rtt_ms", "cpu_local_pct", "cpu_remote_pct"})
TIMES = frozenset({"median_ms", "sd_ms", "latency_ms"})
PING = TIMES | {"avg_ms", "p99_ms", "loss_pct"}
STREAM = frozenset(
    {"loss_pct", "sent", "received", "lost", "outoforder", "late", "send_errors", "lossy_bursts", "generator_behind",
     "duplicates"}
)  # fmt: skip
RECONNECT = TIMES | {"ping_recovery_ms", "tcp_recovery_ms"}

_DIR = r"(?:dut_rx|dut_tx|uplink|downlink)"  # hil.directions: an endpoint DUT's or an in-path DUT's
_SIZE = r"\d+[kKmMgG]?"
_CONFIG = r"[a-z][a-z0-9_]*"  # a firmware build configuration (default, wnd4, mss536)
_HOSTS = r"[a-z0-9]+_to_[a-z0-9]+"  # a ping's direction, e.g. pc_to_dut, peer_to_pc


@dataclass(frozen=True)
class ScenarioShape:
    name: str  # the threshold profile's scenario key, or a pattern of keys (stress-<profile>)
    cases: str  # the case ids' pattern, e.g. "dut_rx-l64"
    metrics: frozenset[str]
    example: str  # a case id, for messages
    pattern: bool = False  # `name` is a regular expression

    def matches(self, scenario: str) -> bool:
        return re.fullmatch(self.name, scenario) is not None if self.pattern else scenario == self.name

    def case_ok(self, case: str) -> bool:
        return case == "default" or re.fullmatch(self.cases, case) is not None


SCENARIOS: tuple[ScenarioShape, ...] = (
    ScenarioShape("baseline", rf"(?:tcp|udp)-{_DIR}", THROUGHPUT | UDP | IPERF3, "tcp-dut_tx"),
    ScenarioShape("length_tcp", rf"{_DIR}-l\d+", THROUGHPUT | IPERF3, "dut_rx-l1448"),
    ScenarioShape("length_udp", rf"{_DIR}-l\d+", THROUGHPUT | UDP | IPERF3, "dut_rx-l1448"),
    ScenarioShape("window_pc", rf"{_DIR}-w{_SIZE}", THROUGHPUT | IPERF3, "dut_rx-w32K"),
    ScenarioShape("mss_pc", rf"{_DIR}-M\d+", THROUGHPUT | IPERF3, "dut_rx-M536"),
    ScenarioShape("datasize", rf"{_DIR}-n{_SIZE}", THROUGHPUT | IPERF3, "dut_rx-n10M"),
    ScenarioShape("load_udp", rf"{_DIR}-load\d+", THROUGHPUT | UDP | IPERF3, "dut_rx-load90"),
    ScenarioShape("window_dut", rf"dut_rx-{_CONFIG}", THROUGHPUT | IPERF3, "dut_rx-wnd4"),
    ScenarioShape("mss_dut", rf"{_DIR}-{_CONFIG}", THROUGHPUT | IPERF3, "dut_rx-mss536"),
    ScenarioShape("capacity", rf"{_DIR}-l\d+", THROUGHPUT | UDP, "dut_rx-l1448"),
    ScenarioShape("bidir", rf"(?:tcp|udp)(?:-n{_SIZE}|-l\d+)?-{_DIR}", THROUGHPUT | UDP | IPERF3, "tcp-dut_tx"),
    ScenarioShape("latency", _HOSTS, PING, "pc_to_dut"),
    ScenarioShape("flood", rf"{_HOSTS}-\d+", PING, "pc_to_dut-64"),
    ScenarioShape("reconnect", r"(?:pc|peer)_side", RECONNECT, "pc_side"),
    ScenarioShape(r"stress-[a-z0-9][a-z0-9-]*", rf"all|s\d+-{_DIR}", STREAM, "s4-dut_rx", pattern=True),
)
LADDERS = ("window_dut", "mss_dut")  # scenarios a `trends:` entry can shape


def shape_of(scenario: str) -> ScenarioShape | None:
    return next((s for s in SCENARIOS if s.matches(scenario)), None)


def _known() -> str:
    return ", ".join(s.name if not s.pattern else "stress-<profile>" for s in SCENARIOS)


def check_thresholds(profile: ThresholdProfile, path: Path) -> None:
    """Every scenario, case and limit of a threshold profile against what the scenarios record:
    one ConfigError naming the file, the key and the problem (the first one found)."""
    for scenario, cases in profile.scenarios.items():
        shape = shape_of(scenario)
        if shape is None:
            raise ConfigError(f"{path}: scenarios.{scenario}: unknown scenario (one of {_known()})")
        for case, limits in cases.items():
            where = f"{path}: scenarios.{scenario}.{case}"
            if not shape.case_ok(case):
                raise ConfigError(
                    f"{where}: no case of {scenario} is called {case!r} (its cases read like {shape.example!r}, "
                    "or `default` for every case without an entry of its own)"
                )
            for bound, metric, _ in limits.bounds():
                if metric not in shape.metrics:
                    raise ConfigError(
                        f"{where}.{bound}_{metric}: {scenario} records no metric {metric!r} "
                        f"(it records: {', '.join(sorted(shape.metrics))})"
                    )
    for scenario in profile.trends:
        if scenario not in LADDERS:
            raise ConfigError(f"{path}: trends.{scenario}: only a ladder has a trend (one of {', '.join(LADDERS)})")
    every = frozenset().union(*(s.metrics for s in SCENARIOS))
    for scenario, tolerance in profile.regression.items():
        shape = shape_of(scenario)
        if scenario != "default" and shape is None:
            raise ConfigError(f"{path}: regression.{scenario}: unknown scenario (one of default, {_known()})")
        recorded = shape.metrics if shape is not None else every
        for metric in tolerance.metrics or ():
            if metric not in recorded:
                raise ConfigError(
                    f"{path}: regression.{scenario}.metrics: {metric!r} is recorded by no case of {scenario} "
                    f"(one of {', '.join(sorted(recorded))})"
                )
