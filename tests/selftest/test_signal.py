"""The signal sweep's parts without a bench: the radio model against the firmware's own constants
and figures, the sweep's findings (bad points, fall to zero, floors at an RSSI, the range kept),
the attenuator's section and its command driver."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from hil import radio_model as m
from hil.config.attenuator import AttenuatorConfig
from hil.errors import BenchError
from hil.paths import PROJECT_ROOT
from hil.plumbing.attenuator import VirtualAttenuator, held
from hil.scenarios.signal_findings import SweepStep, analyse, floors_for

AIR_H = PROJECT_ROOT / "firmware" / "host" / "src" / "wifi_air.h"
AIR_C = PROJECT_ROOT / "firmware" / "host" / "src" / "wifi_air.c"


def _defines() -> dict[str, int]:
    out = {}
    for name, value in re.findall(r"#define WIFI_AIR_(\w+) \(?(-?\d+)u?\)?", AIR_H.read_text()):
        out[name] = int(value)
    return out


def test_the_model_has_the_firmwares_constants() -> None:
    d = _defines()
    pairs = {"AP_DBM_DEFAULT": m.AP_DBM_DEFAULT, "FIXED_LOSS_DB": m.FIXED_LOSS_DB, "NOISE_DBM": m.NOISE_DBM,
             "ASSOC_MARGIN_DB": m.ASSOC_MARGIN_DB, "RETRY_LIMIT": m.RETRY_LIMIT, "SLOT_NS": m.SLOT_NS,
             "SIFS_NS": m.SIFS_NS, "CW_MIN": m.CW_MIN, "CW_MAX": m.CW_MAX, "PREAMBLE_NS": m.PREAMBLE_NS,
             "SYMBOL_NS": m.SYMBOL_NS, "ACK_NS": m.ACK_NS, "MAC_EXTRA_BYTES": m.MAC_EXTRA_BYTES}  # fmt: skip
    assert {k: d[k] for k in pairs} == pairs
    table = re.findall(r"\{(\d+), (\d+), (-\d+)\}", AIR_C.read_text())
    assert tuple(tuple(int(x) for x in row) for row in table) == m.MCS_TABLE


def test_the_models_figures_at_their_edges() -> None:
    # the C unit test (firmware/tests/test_wifi_air.c) checks the same numbers in the firmware
    assert m.attempt_ns(1512, 7, 0) == 361500 and m.attempt_ns(1512, 7, 1) == 361500 + 72000
    assert m.attempt_ns(54, 0, 0) == 28000 + 67500 + 36000 + 25 * 4000 + 10000 + 28000
    assert m.rssi_for(0) == -40 and m.rssi_for(24.4) == -64 and m.rssi_for(24.6) == -65
    assert [m.mcs_for(r) for r in (-40, -64, -65, -66, -69, -81, -90)] == [7, 7, 6, 5, 4, 0, 0]
    assert m.per(-64, 7) == 0.1 and m.per(-62, 7) == 0.01 and m.per(-84, 0) == 1.0
    assert m.alive(-83) and not m.alive(-84) and m.fall_to_zero_db() == 44
    assert round(m.udp_goodput_mbps(1470, -40), 2) == 32.53  # 1470 B every 361.5 us
    assert m.udp_goodput_mbps(1470, -84) == 0 and m.tcp_goodput_mbps(1460, -84, 0.5) == 0
    assert m.udp_goodput_mbps(1470, -60, halved=True) == pytest.approx(m.udp_goodput_mbps(1470, -60) / 2)
    # a TCP stream's ACKs take air from its data
    assert m.tcp_goodput_mbps(1460, -40, 1.0) < m.tcp_goodput_mbps(1460, -40, 0.5) < m.udp_goodput_mbps(1470, -40)


def _steps(*points: tuple[float, int | None, float]) -> list[SweepStep]:
    return [SweepStep(a, r, v, associated=r is not None) for a, r, v in points]


def test_a_drop_of_more_than_30_pct_at_a_good_signal_is_a_bad_point() -> None:
    steps = _steps((0, -40, 30), (4, -44, 20), (8, -48, 19), (12, -52, 12), (16, -76, 5), (20, -80, 3))
    f = analyse("udp-dut_tx", steps, None, {})
    assert f.bad_at_db == [4, 12], f.bad_points  # -76 dBm is weaker than -75: its drop is not judged
    assert "BAD POINT: udp-dut_tx at 4 dB (-44 dBm): 20.00 Mbit/s, 33 % below 30.00 at 0 dB" in f.bad_points[0]
    slow = _steps((0, -40, 9), (4, -44, 3))  # from below 10 Mbit/s: not judged
    assert analyse("udp-dut_tx", slow, None, {}).bad_points == []


def test_the_fall_to_zero_before_the_expected_range_fails() -> None:
    steps = _steps((0, -40, 30), (10, -50, 29), (20, None, 0))
    early = analyse("tcp-dut_tx", steps, 30, {})
    assert early.fell_to_zero_db == 20 and early.fell_early is not None and "before the bench's" in early.fell_early
    assert analyse("tcp-dut_tx", steps, 20, {}).fell_early is None
    # no range on the bench: ESP-IDF's rule, nothing falls to zero at a signal stronger than -88 dBm
    no_range = analyse("tcp-dut_tx", steps, None, {})
    assert no_range.fell_early == "FALL TO ZERO: tcp-dut_tx at 20 dB (no association, -60 dBm), above -88 dBm"
    weak = _steps((0, -70, 30), (10, -80, 29), (20, None, 0))
    assert analyse("tcp-dut_tx", weak, None, {}).fell_early is None  # -90 dBm, extrapolated
    assert early.keeps == {50.0: (10, -50), 10.0: (10, -50)}
    assert "falls to zero at 20 dB" in early.summary()


def test_a_floor_at_an_rssi_holds_for_every_step_as_strong_or_stronger() -> None:
    steps = _steps((0, -40, 30), (10, -60, 18), (20, -70, 25), (30, -80, 5))
    f = analyse("tcp-dut_tx", steps, None, {-70: 20, -45: 25})
    assert f.floors_missed == [
        "BELOW THRESHOLD: tcp-dut_tx@-70dBm: 18.00 Mbit/s at 10 dB (-60 dBm) < min 20 Mbit/s at -70 dBm or stronger"
    ]
    f = analyse("tcp-dut_tx", _steps((0, -72, 30)), None, {-70: 20})
    assert "no step of the sweep reached -70 dBm" in f.floors_missed[0]

    class Limits:
        min_mbps = 20.0

    assert floors_for("tcp-dut_tx", {"tcp-dut_tx@-70dBm": Limits(), "udp-dut_tx@-60dBm": Limits(), "default": 1}) == {
        -70: 20.0
    }


def test_the_attenuator_section_says_what_is_wrong() -> None:
    ok = AttenuatorConfig(command="att {db}", max_db=10, step_db=3)
    assert ok.steps() == [0, 3, 6, 9, 10] and ok.start == 0
    for bad, words in (
        ({"max_db": 10, "step_db": 1}, "either command"),
        ({"command": "att", "max_db": 10, "step_db": 1}, "no {db}"),
        ({"command": "att {db}", "virtual": True, "max_db": 10, "step_db": 1}, "not both"),
        ({"command": "att {db}", "min_db": 10, "max_db": 10, "step_db": 1}, "below max_db"),
        ({"command": "att {db}", "max_db": 10, "step_db": 1, "start_db": 11}, "outside"),
        ({"command": "att {db}", "max_db": 200, "step_db": 0.5}, "at most 200"),
        ({"command": "att {db}", "max_db": 10, "step_db": 1, "planted_bad_point_db": 4}, "only the virtual"),
    ):
        with pytest.raises(ValidationError, match=re.escape(words)):
            AttenuatorConfig.model_validate(bad)


def test_the_command_driver_runs_the_units_tool_and_the_start_value_comes_back(tmp_path: Path) -> None:
    log = tmp_path / "set.log"
    tool = f"{sys.executable} -c \"import sys; open('{log}', 'a').write(sys.argv[1] + chr(10))\" {{db}}"
    cfg = AttenuatorConfig(command=tool, min_db=0, max_db=30, step_db=10, start_db=5)
    with pytest.raises(RuntimeError), held(cfg, None) as unit:
        unit.set(20)
        raise RuntimeError("the sweep failed")
    assert log.read_text().split() == ["5", "20", "5"]  # the start value restored after the failure
    failing = AttenuatorConfig(command=f"{sys.executable} -c \"raise SystemExit('no unit on port')\" {{db}}",
                               max_db=30, step_db=10)  # fmt: skip
    with pytest.raises(BenchError, match="failed with exit code 1: no unit on port"), held(failing, None):
        pass
    missing = AttenuatorConfig(command="no-such-attenuator-tool {db}", max_db=30, step_db=10)
    with pytest.raises(BenchError, match="not installed or not on PATH"), held(missing, None):
        pass


def test_the_virtual_attenuator_writes_what_the_firmware_reads(tmp_path: Path) -> None:
    air = tmp_path / "attenuator"
    VirtualAttenuator(air).set(12.5)
    assert air.read_text() == "12.5 20\n"
    with held(AttenuatorConfig(virtual=True, max_db=40, step_db=4, start_db=8), air) as unit:
        unit.set(36)
        assert air.read_text() == "36 20\n"
    assert air.read_text() == "8 20\n"


def test_the_esp32_benches_carry_an_attenuator_example_and_skip_the_family_without_one(tmp_path: Path) -> None:
    from hil.dut.bench_file import load_bench
    from hil.run_config import bench_facts
    from hil.scenarios.families.signal import NO_ATTENUATOR, SignalSweep
    from hil.scenarios.profiles import QUICK

    for name in ("esp32.yaml", "esp32-iperf-example.yaml"):
        text = (PROJECT_ROOT / "bench" / name).read_text()
        as_given = load_bench(PROJECT_ROOT / "bench" / name).duts[0]
        cases = SignalSweep().cases(bench_facts(as_given, QUICK))
        assert {c.skip for c in cases} == {NO_ATTENUATOR}, name
        # the example, uncommented, is a valid section whose sweep runs
        example = re.sub(r"(?m)^      # (attenuator:|  \w)", lambda mt: "      " + mt.group(1), text)
        path = tmp_path / name
        path.write_text(example)
        dut = load_bench(path).duts[0]
        att = dut.wifi.attenuator  # type: ignore[attr-defined]
        assert att is not None and att.command is not None and att.steps()[:3] == [0, 2, 4], name
        ran = SignalSweep().cases(bench_facts(dut, QUICK))
        assert [c.id for c in ran if c.skip is None][:4] == [
            f"signal/{s}" for s in ("tcp-dut_tx", "tcp-dut_rx", "udp-dut_tx", "udp-dut_rx")
        ]


def test_a_wifi_pair_sweeps_its_stations_signal_and_reads_its_counts_the_other_way() -> None:
    """The SoftAP is the run's DUT, the attenuator its station's: the four streams run, the
    reassociation (the PC's stream and pings) does not; the model's TCP goodput takes the data
    frames from the station's receive side where the run's DUT sends (dut_tx)."""
    from hil.dut.bench_file import load_bench
    from hil.run_config import bench_facts
    from hil.scenarios.contract import collect
    from hil.scenarios.families.signal import PAIR_REJOIN, SignalSweep, _model_mbps
    from hil.scenarios.profiles import QUICK

    ap, sta = load_bench(PROJECT_ROOT / "bench" / "wifi-pair-signal.yaml").duts
    facts = bench_facts(ap, QUICK, sta)
    assert facts.attenuator is not None and facts.attenuator is sta.wifi.attenuator  # type: ignore[attr-defined]
    assert bench_facts(ap, QUICK).attenuator is None  # without its partner: the SoftAP has none
    cases = {c.case.id: c.skip for c in collect(facts) if c.case.family.name == SignalSweep.name}
    streams = ("tcp-dut_tx", "tcp-dut_rx", "udp-dut_tx", "udp-dut_rx")
    assert [k for k, v in cases.items() if v is None] == [f"signal/{s}" for s in streams]
    assert cases["reassociate/signal_lost"] == PAIR_REJOIN
    counts = {"tx_frames": 100, "rx_frames": 400, "tx_retries": 0, "rx_retries": 0}  # the station: 400 in, 100 out
    own, _ = _model_mbps("tcp-dut_tx", 8, counts)  # the station sends: 400 ACKs a 100 segments
    paired, extra = _model_mbps("tcp-dut_tx", 8, counts, flipped=True)  # the station receives the 400 segments
    assert own is not None and paired is not None and paired > own and extra == {"acks_per_segment": 0.25}
