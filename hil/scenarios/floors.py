"""Every throughput floor of the bench-PC benches' threshold files against its case's theoretical
or expected value: a floor below FLOOR_SHARE of it must give its physics (`physics:` in the
entry: a queue, a window, a protocol's dynamics, never the bench PC's speed), or the check fails.
A floor lowered to what a noisy host reaches lets a slower DUT pass; where a host cannot hold a
rate, the bench changes (its rate, its CPU plan, its trials), not the floor.

    python -m hil.scenarios.floors [THRESHOLD_FILE ...]   (default: CHECKED)

prints each floor below FLOOR_SHARE with its reason, and each case measured for the record only
(`no_criterion`) with why; exit 1 when a floor lacks its physics."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from hil.config.thresholds import THRESHOLDS_DIR, Limits, ThresholdProfile, load_thresholds
from hil.scenarios.catalog import with_family_defaults
from hil.scenarios.offered import BASELINE_UDP_LEN, BASELINE_UDP_OF_LINK, BIDIR_UDP_OF_THEORY, UDP_OFFER_OF_THEORY
from hil.theory import tcp_goodput_mbps, udp_goodput_mbps

FLOOR_SHARE = 0.90
# the threshold files of the benches that run on the bench PC: the virtual bench (the test command's
# 20 Mbit/s and `./suite main`'s 100), QEMU, the DUTs in the path (both rates)
CHECKED = ("virtual-20m", "virtual-100m", "qemu-20m", "bridge-20m", "bridge-virtual", "black-box-20m",
           "black-box-virtual")  # fmt: skip


@dataclass(frozen=True)
class Floor:
    file: str
    key: str  # scenario/case
    metric: str
    floor: float
    share: float  # of the case's expected value
    physics: str | None

    @property
    def impossible(self) -> bool:
        return self.share > 1.0

    def line(self) -> str:
        if self.impossible:
            share = f"{100 * self.share:.1f} % of expected"
            return f"{self.file}: {self.key} min_{self.metric} {self.floor:g} = {share}: NO DUT CAN MEET IT"
        why = f"physics: {self.physics}" if self.physics else "NO PHYSICS GIVEN: the host's speed is not a reason"
        return f"{self.file}: {self.key} min_{self.metric} {self.floor:g} = {100 * self.share:.1f} % of expected; {why}"


def expected_efficiency(scenario: str, case: str, link_mbit: float | None) -> float:
    """The efficiency (% of the case's theory) a DUT without fault reaches by construction: UDP
    cases offer less than their theory, everything else its whole theory (capacity, TCP, the
    window-limited expectations, the offered load's own rate)."""
    if scenario == "baseline" and case.startswith("udp") and link_mbit:
        return 100.0 * link_mbit * BASELINE_UDP_OF_LINK / udp_goodput_mbps(link_mbit, BASELINE_UDP_LEN)
    if scenario == "length_udp":
        return 100.0 * UDP_OFFER_OF_THEORY
    if scenario == "bidir" and "udp" in case:
        return 100.0 * BIDIR_UDP_OF_THEORY
    return 100.0


def expected_mbps(scenario: str, case: str, link_mbit: float | None) -> float | None:
    """What a min_mbps floor is measured against: the case's theory times its expected share."""
    if not link_mbit:
        return None
    theory = udp_goodput_mbps(link_mbit, BASELINE_UDP_LEN) if "udp" in case else tcp_goodput_mbps(link_mbit, 1460)
    return theory * expected_efficiency(scenario, case, link_mbit) / 100.0


def floors(profile: ThresholdProfile, name: str) -> tuple[list[Floor], list[str]]:
    """(every throughput floor below FLOOR_SHARE of its expected value, every case measured for
    the record only) of a threshold profile."""
    low: list[Floor] = []
    unjudged: list[str] = []
    for scenario, cases in profile.scenarios.items():
        for case, limits in cases.items():
            key = f"{scenario}/{case}"
            if limits.no_criterion is not None:
                unjudged.append(f"{name}: {key}: no criterion ({limits.no_criterion})")
                continue
            low += _low(name, key, scenario, case, limits, profile.link_mbit)
    return low, unjudged


def _low(name: str, key: str, scenario: str, case: str, limits: Limits, link: float | None) -> list[Floor]:
    out = []
    if limits.min_efficiency_pct is not None:
        share = limits.min_efficiency_pct / expected_efficiency(scenario, case, link)
        if share < FLOOR_SHARE:
            out.append(Floor(name, key, "efficiency_pct", limits.min_efficiency_pct, share, limits.physics))
    if limits.min_mbps is not None and (expected := expected_mbps(scenario, case, link)):
        share = limits.min_mbps / expected
        if share < FLOOR_SHARE or share > 1.0:  # below: too low a floor; above: one no DUT can meet
            out.append(Floor(name, key, "mbps", limits.min_mbps, share, limits.physics))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hil.scenarios.floors", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="threshold files (default: the bench PC's benches')")
    args = parser.parse_args(argv)
    paths = args.files or [THRESHOLDS_DIR / f"{n}.yaml" for n in CHECKED]
    missing = 0
    for path in paths:
        low, unjudged = floors(with_family_defaults(load_thresholds(path)), path.stem)
        for f in low:
            print(f.line())
            missing += f.physics is None or f.impossible
        for line in unjudged:
            print(line)
    print(f"{missing} floor(s) below {100 * FLOOR_SHARE:.0f} % of expected without their physics, or above 100 %")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
