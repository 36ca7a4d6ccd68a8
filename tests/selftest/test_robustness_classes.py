"""The robustness family's frames and bookkeeping, without a bench: each class is built the same
way for the same seed, covers its variants, holds the faults its name promises; the options'
parsers refuse bad values; the pool and sanitizer readings."""

from __future__ import annotations

import dataclasses

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from hil.robustness.classes import CLASSES, Ends, build, is_reserved_group, systematic_frames
from hil.scenarios.contract import BenchFacts
from hil.scenarios.families.robustness import (
    NOT_ISOLATED,
    Robustness,
    _names,
    _pcap,
    held,
    pools_used,
    sanitizer_report,
)
from hil.scenarios.profiles import QUICK

ENDS = Ends("02:11:22:33:44:55", "10.77.0.1", "02:00:00:00:00:02", "10.77.0.2")


@pytest.mark.parametrize("name", list(CLASSES))
def test_a_class_is_the_same_for_the_same_seed_and_covers_its_variants(name: str) -> None:
    cls = CLASSES[name]
    count = cls.counts["quick"]
    frames = build(cls, ENDS, count, seed=7)
    assert len(frames) == count
    assert [f.data for f in frames] == [f.data for f in build(cls, ENDS, count, seed=7)]
    assert [f.data for f in frames] != [f.data for f in build(cls, ENDS, count, seed=8)]
    systematic = {f.variant for f in systematic_frames(cls, ENDS, 7)}
    assert systematic <= {f.variant for f in frames}, "the quick count leaves variants out"
    assert all(len(f.data) >= 14 or name == "ethernet" for f in frames)


def test_fewer_frames_than_variants_thins_them_evenly() -> None:
    frames = build(CLASSES["tcp"], ENDS, 10, seed=1)
    assert len(frames) == 10 and len({f.variant for f in frames}) > 1


def test_the_ipv4_class_claims_lengths_past_its_frames() -> None:
    longer = [f for f in build(CLASSES["ipv4"], ENDS, 150, seed=1) if f.variant.endswith("> frame")]
    assert len(longer) >= 3
    for f in longer:
        claimed = int.from_bytes(f.data[16:18], "big")
        assert claimed > len(f.data) - 14 and claimed > 1500


def test_the_tcp_class_sends_every_flag_combination_and_mss_0() -> None:
    frames = build(CLASSES["tcp"], ENDS, 700, seed=1)
    flags = {int(Ether(f.data)[TCP].flags) for f in frames if f.variant.startswith("every flag combination")}
    assert flags == set(range(256))
    mss0 = next(f for f in frames if f.variant == "options: MSS 0")
    assert b"\x02\x04\x00\x00" in mss0.data
    assert all(Ether(f.data)[IP].dst == ENDS.dst_ip for f in frames if f.variant.startswith("SYN flood"))


def test_reserved_group_frames_are_the_ones_a_bridge_never_forwards() -> None:
    frames = [f for f in build(CLASSES["ethernet"], ENDS, 150, seed=1) if f.variant.startswith("to IEEE 802.1D")]
    assert len(frames) == 16
    assert [is_reserved_group(f.data) for f in frames] == [False] + [True] * 15  # ...00: BPDUs, forwarded without STP


def test_bad_options_are_refused_naming_the_option(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="--robustness-classes takes names of ipv4"):
        _names("ipv4,nonsense")
    with pytest.raises(ValueError, match="--replay: no file"):
        _pcap(str(tmp_path / "missing.pcap"))
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"not a capture at all")
    with pytest.raises(ValueError, match="is not a PCAP file"):
        _pcap(str(junk))


def test_pools_in_use_and_what_is_held_beyond_idle() -> None:
    idle = pools_used({"pool_PBUF_POOL_used": 1, "pool_TCP_PCB_used": 0, "heap_used": 88, "ip_drop": 5})
    assert idle == {"PBUF_POOL": 1, "TCP_PCB": 0, "heap": 88}
    assert pools_used({"pool_PBUF_POOL_avail": 16}) is None  # a firmware that does not say what is in use
    assert held(idle, {"PBUF_POOL": 1, "TCP_PCB": 2, "heap": 80}) == {"TCP_PCB": 2}
    # a connection the DUT closed waits out 2 MSL in TIME_WAIT, with lwIP's TCP timer: not held
    after = pools_used({"pool_TCP_PCB_used": 1, "pool_SYS_TIMEOUT_used": 3, "tcp_time_wait": 1})
    assert after == {"TCP_PCB": 0, "SYS_TIMEOUT": 2}


def test_a_sanitizer_report_is_found_in_the_program_log() -> None:
    log = ("hil-fw-host: up\n==12==ERROR: AddressSanitizer: global-buffer-overflow on address 0x5\n"
           "    #0 0x55d in __asan_memcpy\n    #1 0x55e in fw_planted_defect_inspect tapif.c:90\n"
           "SUMMARY: AddressSanitizer: global-buffer-overflow\n")  # fmt: skip
    report = sanitizer_report(log)
    assert report is not None and report.splitlines()[0].startswith("==12==ERROR: AddressSanitizer")
    assert "fw_planted_defect_inspect" in report
    assert sanitizer_report("hil-fw-host: up\nRESULT stats\n") is None


def test_a_real_bench_runs_the_classes_only_when_its_network_is_declared_isolated() -> None:
    real = Robustness().cases(BenchFacts(QUICK, local=False, kind="same70"))
    assert real and all(c.skip == NOT_ISOLATED for c in real)
    isolated = Robustness().cases(BenchFacts(QUICK, local=False, kind="same70", isolated=True))
    # no console to put the DUT's services up, no bridge: every class but the bridge's, idle
    expected = [f"robustness/{n}" for n in CLASSES if n != "fdb"]
    assert [c.id for c in isolated] == expected and all(c.skip is None for c in isolated)


def test_the_sanitizer_build_is_flashed_where_the_kind_has_it_in_the_path_its_own_configurations() -> None:
    builds = (("default", ()), ("asan", ()), ("bridge", ()), ("bridge-asan", ()))
    endpoint = Robustness().cases(BenchFacts(QUICK, kind="virtual", builds=builds, own_configs=("default",)))
    assert {c.point.build for c in endpoint} == {"asan"} and all(c.own_builds for c in endpoint)  # type: ignore[attr-defined]
    # in the path: the sanitizer build of the bench file's configuration, never the endpoint's
    bridge = BenchFacts(QUICK, in_path=True, kind="virtual", builds=builds, own_configs=("bridge",))
    in_path = Robustness().cases(bridge)
    assert {c.point.build for c in in_path} == {"bridge-asan"} and not any(c.skip for c in in_path)  # type: ignore[attr-defined]
    no_sanitizer = Robustness().cases(dataclasses.replace(bridge, builds=builds[:3]))
    assert {c.point.build for c in no_sanitizer} == {None} and not any(c.skip for c in no_sanitizer)  # type: ignore[attr-defined]
    for name, flashed in (("bridge", "bridge"), ("bridge-asan", "bridge-asan")):
        chosen = dataclasses.replace(bridge, profile=dataclasses.replace(QUICK, sweeps={"robustness_build": (name,)}))
        assert {c.point.build for c in Robustness().cases(chosen)} == {flashed}  # type: ignore[attr-defined]
    endpoints = dataclasses.replace(QUICK, sweeps={"robustness_build": ("default",)})
    refused = Robustness().cases(dataclasses.replace(bridge, profile=endpoints))
    said = "only builds of its bench file's configuration (bridge, bridge-<build>)"
    assert all(c.skip and said in c.skip for c in refused)
    qemu = Robustness().cases(BenchFacts(QUICK, kind="qemu", builds=(("default", ()),)))
    assert {c.point.build for c in qemu} == {None}  # type: ignore[attr-defined]
    named = dataclasses.replace(QUICK, sweeps={"robustness_build": ("planted",)})
    missing = Robustness().cases(BenchFacts(named, kind="qemu", builds=(("default", ()),)))
    assert all(c.skip and "declares no such build" in c.skip for c in missing)
