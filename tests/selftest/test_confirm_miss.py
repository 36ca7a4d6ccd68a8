"""A miss on a DUT that runs on the bench PC, measured once more (--confirm-misses): the real
checker over real records; only the bench context is a plain object (no namespace, no DUT)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from hil.checks import BenchFault
from hil.config.thresholds import ThresholdProfile
from hil.results.recorder import CaseRecord, Recorder, make_record
from hil.scenarios.sweep import check, confirm_miss
from hil.stats import summarize

pytestmark = pytest.mark.selftest

LIMITS = ThresholdProfile.model_validate(
    {"profile": "p", "scenarios": {"baseline": {"tcp-dut_tx": {"min_mbps": 91, "min_efficiency_pct": 96}}}}
)


def _hil(tmp_path: Path, local: bool = True, confirm: bool = True) -> SimpleNamespace:
    dut = SimpleNamespace(config=SimpleNamespace(LOCAL=local, name="d"))
    return SimpleNamespace(thresholds=LIMITS, recorder=Recorder(tmp_path, None), baseline=None, dut=dut,
                           confirm_misses=confirm)  # fmt: skip


def _trial(hil: SimpleNamespace, mbps: float) -> CaseRecord:
    rec = make_record("baseline", "tcp-dut_tx", "d", summarize([mbps]), 94.93)
    hil.recorder.record(rec, 0.0, 1.0)
    return rec


def _first_miss(hil: SimpleNamespace) -> AssertionError:
    with pytest.raises(AssertionError) as miss:
        check(hil, "baseline", [_trial(hil, 70.45)])  # type: ignore[arg-type]
    return miss.value


def test_a_miss_the_second_trial_does_not_reproduce_is_a_bench_fault(tmp_path: Path) -> None:
    hil = _hil(tmp_path)
    with pytest.raises(BenchFault, match=r"not reproduced: baseline/tcp-dut_tx: median 70.45 Mbit/s < threshold"):
        confirm_miss(hil, "baseline", _first_miss(hil), lambda: _trial(hil, 94.6))  # type: ignore[arg-type]
    verdicts = [json.loads(line).get("verdict") for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert "below threshold" in verdicts and "passed" in verdicts  # both trials recorded with their verdicts


def test_a_miss_the_second_trial_confirms_is_the_duts(tmp_path: Path) -> None:
    hil = _hil(tmp_path)
    with pytest.raises(AssertionError) as failed:
        confirm_miss(hil, "baseline", _first_miss(hil), lambda: _trial(hil, 71.0))  # type: ignore[arg-type]
    assert not isinstance(failed.value, BenchFault)
    assert "median 70.45 Mbit/s" in str(failed.value) and "confirmed by a second trial" in str(failed.value)
    assert "median 71.00 Mbit/s" in str(failed.value)


@pytest.mark.parametrize(("local", "confirm"), [(False, True), (True, False)], ids=["real-board", "option-off"])
def test_a_real_board_or_a_run_without_the_option_keeps_its_first_verdict(
    tmp_path: Path, local: bool, confirm: bool
) -> None:
    hil = _hil(tmp_path, local=local, confirm=confirm)
    miss = _first_miss(hil)
    trials: list[float] = []
    with pytest.raises(AssertionError) as failed:
        confirm_miss(hil, "baseline", miss, lambda: _trial(hil, trials.append(94.6) or 94.6))  # type: ignore[arg-type, func-returns-value]
    assert failed.value is miss and trials == []  # not measured again


def test_an_inconclusive_confirmation_leaves_the_first_miss_standing(tmp_path: Path) -> None:
    """The second trial is itself a bench fault (its DUT starved of the host's CPU): the first
    miss, the DUT's own, is the verdict."""
    hil = _hil(tmp_path)

    def starved() -> CaseRecord:
        rec = _trial(hil, 70.9)
        rec.host_starved = True
        return rec

    with pytest.raises(AssertionError) as failed:
        confirm_miss(hil, "baseline", _first_miss(hil), starved)  # type: ignore[arg-type]
    assert not isinstance(failed.value, BenchFault)
    assert "median 70.45 Mbit/s" in str(failed.value) and "confirmation trial was inconclusive" in str(failed.value)


def _pings(hil: SimpleNamespace, p99s: tuple[float, float]) -> list[CaseRecord]:
    """The latency case's two records (both directions), each with its p99."""
    records = []
    for case, p99 in zip(("pc_to_dut", "dut_to_pc"), p99s, strict=True):
        rec = make_record("latency", case, "d", summarize([0.1, 0.12, p99]), None, unit="ms")
        rec.measured["p99_ms"] = p99
        hil.recorder.record(rec, 0.0, 1.0)
        records.append(rec)
    return records


def test_a_case_of_two_records_is_confirmed_on_both(tmp_path: Path) -> None:
    """The latency case records both directions; one slow ping of the host sets the p99 of 20
    (clean-clone run 32: 8.23 ms against 5, median 0.115): both are measured once more."""
    hil = _hil(tmp_path)
    hil.thresholds = ThresholdProfile.model_validate(
        {"profile": "p", "scenarios": {"latency": {"default": {"max_p99_ms": 5}}}}
    )
    with pytest.raises(AssertionError) as first:
        check(hil, "latency", _pings(hil, (8.23, 0.2)))  # type: ignore[arg-type]
    with pytest.raises(BenchFault, match=r"not reproduced: latency/pc_to_dut: p99_ms 8.230 ms > threshold 5"):
        confirm_miss(hil, "latency", first.value, lambda: _pings(hil, (0.3, 0.2)))  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match=r"confirmed by a second trial: latency/dut_to_pc") as confirmed:
        confirm_miss(hil, "latency", first.value, lambda: _pings(hil, (0.3, 6.0)))  # type: ignore[arg-type]
    assert not isinstance(confirmed.value, BenchFault)
