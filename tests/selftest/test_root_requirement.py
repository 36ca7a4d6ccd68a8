import pytest

from fixtures import options as bench

pytestmark = pytest.mark.selftest


class FakeItem:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def get_closest_marker(self, name: str) -> object:
        return object() if name == self.marker else None


def test_without_root_the_virtual_bench_stops_with_one_message(monkeypatch):
    monkeypatch.setattr(bench.os, "geteuid", lambda: 1000)
    with pytest.raises(pytest.UsageError, match="2 selected tests need the virtual bench, which needs root"):
        bench.pytest_collection_modifyitems(None, [FakeItem("hil"), FakeItem("virtual_bench"), FakeItem("selftest")])
    bench.pytest_collection_modifyitems(None, [FakeItem("selftest")])  # self-tests alone run without root
