"""A TCP case the bench PC's links reordered (hil.wire.reordering): every frame reached the DUT,
every retransmission arrived as a duplicate. A bench fault for a DUT on the bench PC, the DUT's
failure on a real board, and no excuse when the wire lost frames or the DUT dropped them."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest

from hil.checks import BELOW_THRESHOLD, BenchFault
from hil.config.thresholds import ThresholdProfile
from hil.results.recorder import CaseRecord, Recorder, make_record
from hil.scenarios.sweep import check
from hil.stats import summarize
from hil.wire.reordering import reordered_by_the_bench

# the wire evidence of mss_pc/dut_rx-M1460 in a clean-clone run (64.86 Mbit/s, 68.3 % of the link)
REORDERED = {
    "wire": {
        "capture_pc": {
            "near->far": {"packets": 11303, "retransmissions": 166},
            "far->near": {"packets": 6067, "dup_acks": 691},
        },
        "counters": {
            "pc": {"rx_packets": 6067, "tx_packets": 11303},
            "dut_tap": {"tx_packets": 11303},
            "dut": {"link_recv": 11303, "tcp_recv": 11303, "tcp_ooseq": 640, "tcp_rx_dup": 166},
        },
    }
}


def _with(**dut: int) -> dict:
    extra = copy.deepcopy(REORDERED)
    extra["wire"]["counters"]["dut"].update(dut)
    return extra


def test_segments_the_bench_reordered_are_named_with_the_figures() -> None:
    why = reordered_by_the_bench(REORDERED)
    assert why is not None and "640 out of sequence" in why and "all 166 of the PC's retransmissions" in why
    assert "11303 frames the PC sent reached it" in why


@pytest.mark.parametrize(
    "extra",
    [
        _with(link_recv=11290),  # 13 frames lost on the way: a loss, not reordering
        _with(tcp_rx_dup=40),  # most retransmissions repaired a segment the DUT never had
        _with(tcp_ooseq=0),  # nothing out of sequence
        {"wire": {"counters": REORDERED["wire"]["counters"]}},  # no capture: the evidence does not say
        {},
    ],
    ids=["frames-lost", "real-retransmissions", "in-order", "no-capture", "no-wire"],
)
def test_no_excuse_without_the_whole_evidence(extra: dict) -> None:
    assert reordered_by_the_bench(extra) is None


def _context(tmp_path: Path, local: bool) -> SimpleNamespace:
    profile = ThresholdProfile.model_validate(
        {"profile": "t", "scenarios": {"mss_pc": {"default": {"min_efficiency_pct": 90}}}}
    )
    dut = SimpleNamespace(config=SimpleNamespace(LOCAL=local))
    return SimpleNamespace(thresholds=profile, recorder=Recorder(tmp_path, None), baseline=None, dut=dut)


def _record(extra: dict) -> CaseRecord:
    rec = make_record("mss_pc", "dut_rx-M1460", "host-dut", summarize([64.86]), 94.93)
    rec.extra.update(copy.deepcopy(extra))
    return rec


def test_a_miss_the_bench_reordered_is_a_bench_fault_for_a_dut_on_the_bench_pc(tmp_path: Path) -> None:
    rec = _record(REORDERED)
    with pytest.raises(BenchFault, match=r"reordered the PC's TCP segments in dut_rx-M1460 \(.*efficiency 68.3 %"):
        check(_context(tmp_path, local=True), "mss_pc", [rec])
    assert rec.verdict == "bench-reordered"


def test_the_same_figures_on_a_board_are_its_failure(tmp_path: Path) -> None:
    rec = _record(REORDERED)
    with pytest.raises(AssertionError, match=BELOW_THRESHOLD) as exc:
        check(_context(tmp_path, local=False), "mss_pc", [rec])
    assert not isinstance(exc.value, BenchFault) and rec.verdict == "below threshold"


def test_a_miss_with_frames_lost_on_the_way_stays_the_duts(tmp_path: Path) -> None:
    rec = _record(_with(link_recv=11290))
    with pytest.raises(AssertionError, match=BELOW_THRESHOLD) as exc:
        check(_context(tmp_path, local=True), "mss_pc", [rec])
    assert not isinstance(exc.value, BenchFault)
