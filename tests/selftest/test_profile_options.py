from types import SimpleNamespace

import pytest

from hil.run_config import profile_from_options as _profile_from_options
from hil.run_options import swept_axes
from hil.scenarios.families.sweeps import FAMILIES, LENGTH, MSS_PC, WINDOW_PC, axis_points, sweep_points

pytestmark = pytest.mark.selftest


def options(**kw):
    base = {"profile": "quick", "stream_duration": None} | {a.field: None for a in swept_axes()}
    return SimpleNamespace(**{**base, **kw})


def test_profile_defaults_and_overrides():
    p = _profile_from_options(options())
    assert p.name == "quick" and axis_points(LENGTH.axis, p) == (64, 100, 500, 1448)
    p = _profile_from_options(options(profile="full", pc_windows="4K,128K", pc_mss="160,1460", lengths="64"))
    assert axis_points(WINDOW_PC.axis, p) == ("4K", "128K") and axis_points(MSS_PC.axis, p) == (160, 1460)
    assert axis_points(LENGTH.axis, p) == (64,) and p.repeat == 3


@pytest.mark.parametrize(
    ("kw", "message"),
    [({"pc_mss": "1,2"}, "--pc-mss values must lie in"), ({"lengths": "a"}, "--lengths takes comma-separated"),
     ({"pc_windows": "4X"}, "--pc-windows: bad size"),
     ({"data_sizes": "-1M"}, "--data-sizes: bad size")],
)  # fmt: skip
def test_bad_overrides_name_the_option(kw, message):
    with pytest.raises(ValueError, match=message):
        _profile_from_options(options(**kw))


def test_every_family_point_has_a_readable_unique_id_and_every_axis_both_profiles():
    for name in ("quick", "full"):
        points = sweep_points(_profile_from_options(options(profile=name)))
        ids = [p.id for p in points]
        assert len(ids) == len(set(ids))
        assert "length_udp/dut_rx-l500" in ids and "baseline/tcp-dut_tx" in ids
        assert all(" " not in i and "/" in i for i in ids)
    for fam in FAMILIES:
        assert fam.axis is None or set(fam.axis.points) == {"quick", "full"}, fam.name


def test_the_last_point_of_each_group_carries_the_groups_chart():
    points = sweep_points(_profile_from_options(options(lengths="64,1448")))
    length = [p for p in points if p.family is LENGTH]
    assert [p.last_of_group for p in length] == [False, True] * 4


def test_pytest_help_lists_the_suites_options() -> None:
    """`pytest --help` is where an engineer looks first: it must print, every option with it
    (argparse formats help texts with %, so a family's "in % of" must not break it)."""
    import subprocess
    import sys

    from hil.paths import PROJECT_ROOT

    # without pytest.ini's addopts: --help configures the plugins, and its --clean-alluredir emptied
    # the running suite's results/allure-results (even with another --alluredir given after --help)
    argv = [sys.executable, "-m", "pytest", "-o", "addopts=", "--help"]
    out = subprocess.run(argv, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr[-1500:]
    for option in ("--bench", "--profile", "--repeat", "--lengths", "--udp-loads", "--bench-fault", "--compare-run"):
        assert option in out.stdout
    assert "in % of the theoretical goodput" in out.stdout
