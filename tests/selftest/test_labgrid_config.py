"""A DUT reserved through a labgrid place, without a coordinator: the bench file's section and
its command-line override, who holds a lock and when it is stale, and what the place's resources
change in the DUT's section."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hil.config.errors import ConfigError
from hil.dut.bench_file import load_bench
from hil.errors import BenchError
from hil.plumbing.labgrid_place import Holder, PlaceResources, apply_place, process_start_ticks, run_user

pytestmark = pytest.mark.selftest

SAME70 = """duts:
  - name: same70-1
    kind: same70
    labgrid: {place: same70-1, coordinator: "lab.example:20408", wait_s: 30}
    link: {shaping: false}
    thresholds: same70-100m
"""


def test_a_board_may_name_a_place_instead_of_its_ports(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(SAME70)
    dut = load_bench(path).duts[0]
    assert dut.labgrid is not None and dut.labgrid.place == "same70-1" and dut.labgrid.wait_s == 30
    path.write_text(
        SAME70.replace('    labgrid: {place: same70-1, coordinator: "lab.example:20408", wait_s: 30}\n', "")
    )
    with pytest.raises(ConfigError, match=r"needs console.port: .* or a labgrid place"):
        load_bench(path)
    path.write_text("duts:\n  - name: v\n    kind: virtual\n    labgrid: {place: p}\n    thresholds: virtual-100m\n")
    with pytest.raises(ConfigError, match="runs on this PC's virtual bench: a labgrid place is for boards"):
        load_bench(path)


def test_the_place_gives_console_and_probe(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(SAME70)
    dut = load_bench(path).duts[0]
    url, probe = (
        "rfc2217://lab.example:4001?ign_set_control",
        {"serial": "ATML2407060000001234", "target": "atsame70q21b"},
    )
    res = PlaceResources("same70-1", "lab.example:20408", "pc/root:hil-1-2", url, None, probe)
    applied = apply_place(dut, res)
    assert applied.console.port == "rfc2217://lab.example:4001?ign_set_control"
    assert applied.probe.unique_id == "ATML2407060000001234" and applied.probe.target == "atsame70q21b"  # type: ignore[attr-defined]
    with pytest.raises(BenchError, match="has no serial port"):
        apply_place(dut, PlaceResources("same70-1", "c:1", "h/u", None, None))
    with pytest.raises(BenchError, match=r"interface enoent0 .* is not on this PC"):
        apply_place(dut, PlaceResources("same70-1", "c:1", "h/u", "rfc2217://h:1", ("lab", "enoent0")))


def test_a_lock_of_a_run_that_is_gone_is_stale_and_no_other_is() -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(gone.stdout)
    here = "bench-pc"
    assert Holder(f"{here}/root:hil-{pid}-12345").stale_on(here) == f"run pid {pid} on this host is gone (killed?)"
    me = os.getpid()
    assert Holder(f"{here}/{run_user(me)}").stale_on(here) is None  # alive: its lock is held
    reused = f"{here}/root:hil-{me}-{(process_start_ticks(me) or 0) + 1}"
    assert "now belongs to another process" in (Holder(reused).stale_on(here) or "")
    assert Holder(f"other-pc/root:hil-{pid}-1").stale_on(here) is None  # another host's: never taken over
    assert Holder(f"{here}/alice").stale_on(here) is None  # a person's: never taken over
    assert Holder("bench-pc/root:hil-12-34").run() == (12, 34)


def test_the_command_line_names_a_place_and_a_missing_coordinator_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from hil.run_config import check_places, partner_with_labgrid
    from hil.run_config import with_labgrid as _with_labgrid

    path = tmp_path / "b.yaml"
    path.write_text(
        "\n".join(line for line in SAME70.splitlines() if "labgrid" not in line) + "\n    console: {port: /dev/x}\n"
    )
    dut = load_bench(path).duts[0]
    monkeypatch.delenv("LG_COORDINATOR", raising=False)
    with pytest.raises(ConfigError, match=r"labgrid place lab-3: no coordinator \(labgrid.coordinator in the bench"):
        _with_labgrid(dut, SimpleNamespace(labgrid_place="lab-3", labgrid_wait=None))
    monkeypatch.setenv("LG_COORDINATOR", "127.0.0.1:20408")
    placed = _with_labgrid(dut, SimpleNamespace(labgrid_place="lab-3", labgrid_wait=5.0))
    assert placed.labgrid is not None and placed.labgrid.coordinator == "127.0.0.1:20408" and placed.labgrid.wait_s == 5
    unplaced = _with_labgrid(dut, SimpleNamespace(labgrid_place=None, labgrid_wait=5.0))
    with pytest.raises(ConfigError, match="--labgrid-wait is for a DUT reserved through a labgrid place"):
        check_places(SimpleNamespace(labgrid_wait=5.0), unplaced, None)
    # a partner's own place: its coordinator resolved, the run's wait applied; two DUTs never share a place
    other = partner_with_labgrid(
        placed.model_copy(update={"name": "b", "labgrid": None}), SimpleNamespace(labgrid_wait=1.0)
    )
    assert other.labgrid is None
    partner = partner_with_labgrid(placed.model_copy(update={"name": "b"}), SimpleNamespace(labgrid_wait=1.0))
    assert (
        partner.labgrid is not None and partner.labgrid.wait_s == 1 and partner.labgrid.coordinator == "127.0.0.1:20408"
    )
    check_places(SimpleNamespace(labgrid_wait=5.0), unplaced, partner)  # the wait is for the partner's place
    with pytest.raises(ConfigError, match="DUTs same70-1 and b both name labgrid place lab-3: each board is a place"):
        check_places(SimpleNamespace(labgrid_wait=None), placed, partner)
    with pytest.raises(ConfigError, match=r"labgrid.place: String should match pattern"):
        _with_labgrid(dut, SimpleNamespace(labgrid_place="a/b", labgrid_wait=None))
