"""The case's step clock (hil.step_clock): steps are exclusive of the steps inside them, so a
case's steps add up to its wall time; nothing is timed without a running clock; the overhead
benchmark sums them per family and keeps the DUT's own recovery apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.suite_overhead import FamilyTime, costs_report, step_costs
from hil import step_clock


def test_nested_steps_are_exclusive_and_add_up_to_the_wall_time(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]  # a clock the test moves: no sleeping, no flaking on a busy host
    monkeypatch.setattr(step_clock.time, "monotonic", lambda: now[0])

    def spend(seconds: float) -> None:
        now[0] += seconds

    clock = step_clock.start("tests/hil/test_scenarios.py::test_scenario[baseline/tcp/dut_tx]")
    try:
        with step_clock.timed("call"):
            with step_clock.timed("traffic"):
                spend(2.0)
            with step_clock.timed("counters"):
                spend(0.2)
                with step_clock.timed("counters"):  # the same name nested: its time counted once
                    spend(0.1)
            spend(0.05)
        spend(0.01)  # outside every step: wall time no step names
    finally:
        assert step_clock.stop() is clock
    s = clock.seconds
    assert s == pytest.approx({"traffic": 2.0, "counters": 0.3, "call": 0.05})
    assert clock.calls == {"traffic": 1, "counters": 2, "call": 1}
    fields = clock.as_fields()
    assert fields["wall_s"] == pytest.approx(2.36)
    assert list(fields["steps"]) == ["traffic", "counters", "call"]  # type: ignore[arg-type]  # the largest first


def test_without_a_running_clock_nothing_is_timed() -> None:
    assert step_clock.stop() is None
    with step_clock.timed("traffic"):
        pass
    assert step_clock.stop() is None


def test_the_benchmark_sums_steps_per_family_and_keeps_the_duts_own_apart(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text(
        "\n".join(
            json.dumps({"scenario": sc, "median": 1.0, "test": t})
            for sc, t in (("baseline_tcp", "a"), ("robustness", "b"))
        )
    )
    timings = tmp_path / "timings.jsonl"
    rows = [
        {"run": "old", "test": "a", "steps": {"capture: start": 99.0}},
        {"run": "new", "test": "a", "steps": {"traffic": 10.0, "capture: start": 0.4, "setup": 0.6}},
        {"run": "new", "test": "b", "steps": {"traffic": 1.0, "robustness: ping back (the DUT's own recovery)": 3.0}},
        {"run": "new", "test": "never-recorded", "steps": {"setup": 50.0}},
    ]
    timings.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    costs = step_costs(timings, results)
    assert costs == {
        "baseline": {"traffic": 10.0, "capture: start": 0.4, "setup": 0.6},
        "robustness": {"traffic": 1.0, "robustness: ping back (the DUT's own recovery)": 3.0},
    }
    lines = costs_report(costs, {"baseline": FamilyTime(1, 11.0, 10.0), "robustness": FamilyTime(1, 4.5, 1.0)})
    text = "\n".join(lines)
    assert "baseline: the suite's overhead 10.0%" in text
    assert "robustness: the suite's overhead 50.0% (the DUT's own 3.0 s apart)" in text
    assert "0.6 s  setup" in text and "traffic" not in text
