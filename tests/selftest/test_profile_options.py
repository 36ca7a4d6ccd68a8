from types import SimpleNamespace

import pytest

from fixtures.options import _profile_from_options

pytestmark = pytest.mark.selftest


def options(**kw):
    base = {"profile": "quick", "stream_duration": None, "pc_windows": None, "pc_mss": None, "lengths": None}
    return SimpleNamespace(**{**base, **kw})


def test_profile_defaults_and_overrides():
    assert _profile_from_options(options()).name == "quick"
    p = _profile_from_options(options(profile="full", pc_windows="4K,128K", pc_mss="160,1460", lengths="64"))
    assert p.pc_windows == ("4K", "128K") and p.pc_mss == (160, 1460) and p.lengths == (64,) and p.repeat == 3


@pytest.mark.parametrize(
    ("kw", "message"),
    [({"pc_mss": "1,2"}, "--pc-mss values must lie in"), ({"lengths": "a"}, "--lengths takes comma-separated"),
     ({"pc_windows": "4X"}, "--pc-windows: bad size")],
)  # fmt: skip
def test_bad_overrides_name_the_option(kw, message):
    with pytest.raises(ValueError, match=message):
        _profile_from_options(options(**kw))
