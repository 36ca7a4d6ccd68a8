"""A real bench's frame tester: the bench file's `tester:` section, the calibration file
`./suite calibrate-tester` writes and the checks a run makes before it trusts it (the same NICs,
link rate and slowdown, every frame size), and the RFC 2544 family's cases on such a bench."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hil.config.errors import ConfigError
from hil.dut.bench_file import load_bench
from hil.paths import PROJECT_ROOT
from hil.scenarios.contract import BenchFacts
from hil.scenarios.families.rfc2544 import NOT_LOCAL, Rfc2544
from hil.scenarios.profiles import PROFILES
from hil.traffic.tester_ceilings import Ceiling, NicIdentity, load_ceilings, save_ceilings

pytestmark = pytest.mark.selftest

PC = NicIdentity("nic1", "enp1s0", "02:00:00:00:00:11")
PEER = NicIdentity("nic2", "enp2s0", "02:00:00:00:00:22")
TWO_NICS = (
    "duts:\n  - name: box\n    kind: cabled_black_box\n    network: {{pc_ip: 10.77.0.1, pc_netns: nic1}}\n"
    "    link: {{shaping: false}}\n    peer: {peer}\n    tester: {{ceilings: cal/tester.json}}\n    thresholds: x\n"
)


def _bench(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "bench.yaml"
    path.write_text(text)
    return load_bench(path)


def test_the_tester_section_is_for_a_real_bench_with_a_second_nic(tmp_path: Path) -> None:
    dut = _bench(tmp_path, TWO_NICS.format(peer="{ip: 10.77.0.3, netns: nic2}")).duts[0]
    assert dut.tester is not None and dut.tester.ceilings_path().name == "tester.json"
    assert dut.tester.ceilings_path().is_absolute()
    for peer in ("{ip: 10.77.0.3, ssh: {host: hub}}",):  # a remote peer: no second NIC of this PC
        with pytest.raises(ConfigError, match=r"tester: is for a real bench whose DUT sits in the path"):
            _bench(tmp_path, TWO_NICS.format(peer=peer))
    virtual = "duts:\n  - name: v\n    kind: virtual\n    tester: {ceilings: x.json}\n    thresholds: x\n"
    with pytest.raises(ConfigError, match=r"the virtual bench measures its tester itself"):
        _bench(tmp_path, virtual)


def test_the_family_runs_on_a_two_nic_bench_and_says_why_not_elsewhere() -> None:
    quick = PROFILES["quick"]
    two = Rfc2544().cases(BenchFacts(quick, in_path=True, local=False, two_nic_tester=True))
    assert two and all(c.skip is None for c in two)
    remote = Rfc2544().cases(BenchFacts(quick, in_path=True, local=False))
    assert remote and all(c.skip == NOT_LOCAL for c in remote) and "./suite calibrate-tester" in NOT_LOCAL


def _saved(tmp_path: Path) -> Path:
    path = tmp_path / "cal" / "tester.json"
    ceilings = [Ceiling(512, 23_400.0, 23_496.0, spacing={"even_gap_us": 42.6, "median_gap_us": 42.6,
                                                           "p95_gap_us": 43.0}),
                Ceiling(64, 120_000.0, 148_810.0, lost=3)]  # fmt: skip
    save_ceilings(path, ceilings, PC, PEER, 100.0, 0)
    return path


def test_a_calibration_file_is_read_back_for_the_same_bench(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    got = load_ceilings(path, [64, 512], PC, PEER, 100.0, 0)
    assert got[512].fps == 23_400.0 and not got[512].limited and got[64].limited and got[64].lost == 3
    assert "calibrated" in got[64].source and "tester.json" in got[64].source
    assert got[512].spacing["median_gap_us"] == 42.6


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sizes": [1518]}, "no ceiling at 1518 B"),
        ({"pc": NicIdentity("nic1", "enp1s0", "02:00:00:00:00:99")}, "measured with the pc end"),
        ({"peer": NicIdentity("nic3", "enp2s0", "02:00:00:00:00:22")}, "the bench now has enp2s0"),
        ({"link": 1000.0}, "measured at 100.0 Mbit/s"),
        ({"slow_ns": 60_000}, "slowed by 0 ns, the run is at 100 Mbit/s and 60000 ns"),
        ({"file": "missing"}, "no such file: the tester is not calibrated"),
        ({"file": "garbage"}, "not a calibration file"),
    ],
)
def test_a_calibration_that_is_not_this_benchs_is_one_line_naming_the_command(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    path = _saved(tmp_path)
    if change.get("file") == "missing":
        path.unlink()
    elif change.get("file") == "garbage":
        path.write_text(json.dumps({"format": 99}))
    args = (change.get("sizes", [64, 512]), change.get("pc", PC), change.get("peer", PEER),
            change.get("link", 100.0), change.get("slow_ns", 0))  # fmt: skip
    with pytest.raises(ConfigError) as err:
        load_ceilings(path, *args)  # type: ignore[arg-type]
    text = str(err.value)
    assert message in text and "./suite calibrate-tester" in text and "\n" not in text, text


def test_calibrate_tester_stops_on_a_bench_without_a_two_nic_tester_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hil.traffic.calibrate_tester import main

    assert main(["--bench", str(PROJECT_ROOT / "bench" / "bridge.yaml")]) == 4
    err = capsys.readouterr().err
    assert "has no two-NIC tester: give it `tester: {ceilings: FILE}`" in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as stop:
        main(["--bench", "x.yaml", "--frame-sizes", "63"])
    assert stop.value.code == 4 and "--frame-sizes values must lie in 64..1518" in capsys.readouterr().err
