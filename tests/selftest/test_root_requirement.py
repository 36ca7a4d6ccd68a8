from types import SimpleNamespace

import pytest

from fixtures import cases as bench
from fixtures.options import RUN_KEY
from hil.config.sections import DutBase
from hil.dut.same70 import Same70DutConfig

pytestmark = pytest.mark.selftest


class FakeItem:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def get_closest_marker(self, name: str) -> object:
        return object() if name == self.marker else None

    def iter_markers(self, name: str) -> list[object]:
        return []


class FakeConfig:
    def __init__(self, dut: DutBase | None = None) -> None:
        self.stash = {RUN_KEY: SimpleNamespace(dut=dut)} if dut else {}


def test_without_root_the_virtual_bench_stops_with_one_message(monkeypatch):
    monkeypatch.setattr(bench.os, "geteuid", lambda: 1000)
    items = [FakeItem("hil"), FakeItem("virtual_bench"), FakeItem("selftest")]
    with pytest.raises(pytest.UsageError, match="2 selected tests need the virtual bench, which needs root"):
        bench.pytest_collection_modifyitems(FakeConfig(), items)
    bench.pytest_collection_modifyitems(FakeConfig(), [FakeItem("selftest")])  # self-tests alone run without root


def test_a_real_board_needs_no_root_for_hil_tests(monkeypatch):
    monkeypatch.setattr(bench.os, "geteuid", lambda: 1000)
    board = Same70DutConfig(
        name="board", kind="same70", console={"port": "/dev/ttyACM0"}, link={"shaping": False}, thresholds="x"
    )
    bench.pytest_collection_modifyitems(FakeConfig(board), [FakeItem("hil"), FakeItem("selftest")])
    with pytest.raises(pytest.UsageError, match="1 selected tests need the virtual bench"):
        bench.pytest_collection_modifyitems(FakeConfig(board), [FakeItem("hil"), FakeItem("virtual_bench")])
