"""The exact-count family (hil/scenarios/families/packet_count.py, seed 003): its cases come from
the registry with no threshold file naming them (the family's default limits), and it counts what
a lossy link drops: the same cases pass on the clean virtual link and fail on one that drops 2 %
of the frames, naming the datagrams lost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hil.config.thresholds import load_thresholds, profile_path
from hil.scenarios.catalog import with_family_defaults
from hil.scenarios.contract import BenchFacts, collect
from hil.scenarios.families.packet_count import PACKETS_PER_S, numbered, pace_pps
from hil.scenarios.profiles import PROFILES
from hil.traffic.roles import TrafficResult, TrafficSpec
from tests.support.child_suite import run_suite

COUNT = ("tests/hil", "-m", "count")
CAPTURED = ("--wire-capture", "on")  # the counts are compared with the capture


@pytest.mark.selftest
def test_the_pace_fits_a_slow_link() -> None:
    """The sender's pace is PACKETS_PER_S where the link holds it, and on a slower link (QEMU's
    20 Mbit/s with 1500-byte datagrams) at most 90 % of the link, so no shaper's queue overflows."""
    assert pace_pps(100, 1500) == PACKETS_PER_S  # 23.5 Mbit/s of 1500-byte datagrams on 100 Mbit/s
    assert pace_pps(20, 100) == PACKETS_PER_S
    slow = pace_pps(20, 1500)
    assert slow == 1462 and slow * (1500 + 38) * 8 <= 0.9 * 20e6  # the wire's frames within 90 % of it
    assert pace_pps(0.001, 1500) == 1


@pytest.mark.selftest
def test_cases_and_limits_come_from_the_family_alone() -> None:
    quick = [c.case.id for c in collect(BenchFacts(PROFILES["quick"])) if c.case.family.marker == "count"]
    assert quick == [f"count/{proto}-{d}-ip{n}" for proto in ("udp", "tcp") for d in ("dut_rx", "dut_tx")
                     for n in (100, 1500)]  # fmt: skip
    full = [c.case for c in collect(BenchFacts(PROFILES["full"], in_path=True)) if c.case.family.marker == "count"]
    assert [c.id for c in full][:4] == [f"count/udp-downlink-ip{n}" for n in (100, 500, 1000, 1500)]
    assert [c.id for c in full][8:12] == [f"count/tcp-downlink-ip{n}" for n in (100, 500, 1000, 1500)]
    assert all(c.point.packets == 10_000 for c in full)  # type: ignore[attr-defined]  # the study's count
    for name in ("virtual-100m", "qemu-20m", "bridge-virtual", "black-box-virtual", "same70-100m"):
        profile = load_thresholds(profile_path(name))
        assert "count" not in profile.scenarios  # no threshold file of these names the family ...
        default = with_family_defaults(profile).limits("count", "udp-dut_rx-ip100")
        assert default.bounds() == [("max", "lost", 0.0)]  # ... its default holds
    wifi = with_family_defaults(load_thresholds(profile_path("esp32-wifi")))  # a bench overrides it
    assert wifi.limits("count", "udp-dut_rx-ip100").bounds() == [("max", "loss_pct", 1.0)]


@pytest.mark.selftest
def test_iperf2s_closing_datagram_is_not_a_packet_sent() -> None:
    spec = TrafficSpec("udp", "dut_tx", 1.0, length=72, rate_mbps=1.0)
    for counted, want in ((1000, 1000), (1001, 1000), (999, 999), (1002, 1002)):
        assert numbered(TrafficResult(spec, 1.0, 1.0, datagrams=counted), 1000) == want


@pytest.mark.virtual_bench
@pytest.mark.slow
def test_the_count_passes_on_a_clean_link_and_fails_on_a_lossy_one(tmp_path: Path) -> None:
    """... and each count agrees with the PC's capture, and the lossy link's loss is placed on the
    link in the loss ledger, within 10 % (or 3 frames) of what the injector dropped."""
    clean = run_suite(tmp_path / "clean", "--profile", "quick", "-k", "ip1500", *CAPTURED, tests=COUNT)
    assert clean.returncode == 0, clean.stdout[-3000:]
    records = [json.loads(line) for line in (tmp_path / "clean" / "results.jsonl").read_text().splitlines()]
    agree = {r["case"]: r["extra"]["capture_count"] for r in records if r.get("scenario") == "count" and "extra" in r}
    assert len(agree) == 4 and all(a["agrees"] is True for a in agree.values()), agree
    # the firmware's paced TCP client hands lwIP whole writes (it cut them to its byte allowance:
    # 1000 writes of 1460 B went out as 12,885 segments)
    assert agree["tcp-dut_tx-ip1500"]["segments"] <= 1.05 * 1000, agree["tcp-dut_tx-ip1500"]
    bench = tmp_path / "lossy.yaml"
    bench.write_text(
        "duts:\n  - name: lossy\n    kind: virtual\n    thresholds: virtual-100m\n    link: {loss_pct: 2}\n"
    )
    lossy = run_suite(tmp_path / "lossy", "--profile", "quick", "-k", "udp and ip1500", "--bench", str(bench),
                      *CAPTURED, tests=COUNT)  # fmt: skip
    assert lossy.returncode == 1, lossy.stdout[-3000:]  # the DUT's path lost datagrams: a failure, not a bench fault
    records = [json.loads(line) for line in (tmp_path / "lossy" / "results.jsonl").read_text().splitlines()]
    counted = [r for r in records if r.get("scenario") == "count" and "measured" in r]
    lost = {r["case"]: r["measured"]["lost"] for r in counted}
    # 2 % of 1000 frames each way, counted exactly (binomial: 5..45 lost in all but 1e-6 of runs)
    assert set(lost) == {"udp-dut_rx-ip1500", "udp-dut_tx-ip1500"} and all(5 <= n <= 45 for n in lost.values()), lost
    assert re.search(r"count/udp-dut_rx-ip1500 .* below threshold", lossy.stdout), lossy.stdout[-3000:]
    for r in counted:  # the ledger puts the loss on the link: the injector's own drop counter
        ledger, injected = r["extra"]["ledger"], r["extra"]["wire"]["counters"]["link_loss"]["dropped"]
        # the injector drops 2 % of every frame on the link, iperf's end-of-test datagrams and ARP among
        # them, which the count does not number (a run placed 16 on the link where it dropped 18)
        assert abs(ledger["link"]["lost"] - injected) <= max(3, 0.1 * injected), (r["case"], ledger, injected)
        assert ledger["unexplained"]["lost"] <= 0.1 * ledger["lost"], (r["case"], ledger)
        assert r["extra"]["capture_count"]["agrees"] is True, r["extra"]["capture_count"]
    print(f"lost on a 2 % lossy link, of 1000 each: {lost}; ledgers: {[r['extra']['ledger']['link'] for r in counted]}")
