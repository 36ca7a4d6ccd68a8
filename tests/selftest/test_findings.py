"""The run's findings computed from its records (hil.results.findings): an optimum per direction
and the ratio between the directions, a plateau said as none, a length sweep's knee, where loss
starts with size, TX against RX; each with the numbers it comes from."""

from __future__ import annotations

from hil.results.findings import findings, findings_text
from hil.results.recorder import CaseRecord


def rec(scenario: str, case: str, median: float, x: float = 0.0, loss: float | None = None,
        unit: str = "Mbit/s") -> CaseRecord:  # fmt: skip
    r = CaseRecord(scenario, case, "dut", unit, [median], median, median, median, 0.0, None, None, loss)
    r.extra["x"] = x
    return r


def by_topic(records: list[CaseRecord]) -> dict[str, str]:
    return {f.topic: f.statement for f in findings(records)}


def test_the_optimum_window_per_direction_and_their_ratio() -> None:
    records = [rec("window_pc", f"dut_rx-w{k}K", v, k * 1024) for k, v in ((8, 20.0), (32, 60.0), (64, 61.0))]
    records += [rec("window_pc", f"dut_tx-w{k}K", v, k * 1024) for k, v in ((8, 30.0), (32, 90.0), (64, 70.0))]
    found = findings(records)
    statement = by_topic(records)["window_pc"]
    assert "PC->DUT: w64K (61.00 Mbit/s; from w32K on within 2 % of it)" in statement
    assert "DUT->PC: w32K (90.00 Mbit/s)" in statement
    assert "DUT->PC / PC->DUT at their optima 1.48" in statement  # 90 / 61
    assert "dut_rx: w8K 20.00, w32K 60.00, w64K 61.00 Mbit/s" in found[0].numbers


def test_a_plateau_has_no_optimum_and_a_flat_length_sweep_no_knee() -> None:
    records = [rec("mss_pc", f"dut_rx-M{m}", v, m) for m, v in ((536, 94.0), (1460, 94.5))]
    records += [rec("length_tcp", f"dut_tx-l{n}", v, n) for n, v in ((64, 93.0), (1448, 94.0))]
    found = by_topic(records)
    assert "PC->DUT: none (every point within 2 % of the best, 94.50 Mbit/s)" in found["mss_pc"]
    assert "DUT->PC: none, flat (the shortest, l64, already within 10 % of the best" in found["length_tcp"]


def test_the_knee_and_where_loss_starts_growing() -> None:
    lengths = ((64, 4.0, 0.0), (100, 6.0, 0.0), (500, 30.0, 0.1), (1448, 33.0, 0.5))
    records = [rec("length_udp", f"dut_rx-l{n}", v, n, loss) for n, v, loss in lengths]
    records += [rec("count", f"udp-dut_tx-ip{n}", 0.0, n, 0.0, unit="% lost") for n in (100, 1500)]
    found = by_topic(records)
    assert "PC->DUT reaches 90 % of its best (33.00 Mbit/s at l1448) at l500 (30.00 Mbit/s)" in found["length_udp"]
    assert "PC->DUT starts losing at l500 (0.100 %) and grows with size" in found["length_udp loss"]
    assert "DUT->PC lost nothing at any size" in found["count udp loss"]


def test_tx_against_rx_and_a_run_without_sweeps() -> None:
    records = [rec("baseline", "tcp-dut_tx", 40.0), rec("baseline", "tcp-dut_rx", 20.0)]
    assert "TCP DUT->PC / PC->DUT 2.000 (DUT->PC faster)" in by_topic(records)["baseline"]
    assert findings([rec("latency", "pc_to_dut", 0.2, unit="ms")]) == []
    assert "no findings" in findings_text([])


def test_a_study_factor_and_nagle_on_against_off() -> None:
    records = [
        rec("stack", f"dut_rx-{c}", v, i) for i, (c, v) in enumerate((("stock", 0.8), ("default", 4.6), ("tuned", 5.6)))
    ]
    for r in records:
        r.extra["config"] = r.case.removeprefix("dut_rx-")
    for case, per in (("dut_tx-on", 0.07), ("dut_tx-off", 1.0)):
        r = rec("nagle", case, 0.2)
        r.measured["segments_per_write"] = per
        records.append(r)
    found = by_topic(records)
    assert "the tuned build is 7.00x the stock build" in found["stack study"]
    assert "DUT->PC sends 1.00 segments a write with Nagle off, 0.07 with it on, 14.3x the segments" in found["nagle"]


def test_a_knee_only_the_best_point_reaches_lies_before_it() -> None:
    records = [rec("length_udp", f"dut_tx-l{n}", v, n) for n, v in ((64, 44.3), (1448, 86.1))]
    assert (
        "DUT->PC reaches 90 % of its best only at l1448 (86.10 Mbit/s): the knee lies between l64 and l1448"
        in (by_topic(records)["length_udp"])
    )
