"""The spacing of an offered stream at the DUT's input (hil.wire.spacing): even, clumped, jittered."""

import pytest

from hil.wire.spacing import spacing_of

pytestmark = pytest.mark.selftest

LENGTH = 500  # payload bytes: at 40 Mbit/s one datagram every 100 us


def test_an_even_stream_has_the_even_gap_and_no_clumps() -> None:
    times = [i * 100e-6 for i in range(1000)]
    sp = spacing_of(times, 40.0, LENGTH)
    assert sp is not None and sp.even_gap_us == pytest.approx(100.0)
    assert sp.median_gap_us == pytest.approx(100.0) and sp.p5_gap_us == pytest.approx(100.0)
    assert sp.clumped_pct == 0.0 and sp.cv == pytest.approx(0.0, abs=1e-6) and sp.datagrams == 1000


def test_a_stream_in_clumps_of_ten_back_to_back() -> None:
    """A shaper releasing 10 datagrams at once every 1 ms: the same rate, 90 % of the gaps tiny."""
    times = [c * 1e-3 + k * 5e-6 for c in range(100) for k in range(10)]
    sp = spacing_of(times, 40.0, LENGTH)
    assert sp is not None and sp.median_gap_us == pytest.approx(5.0)
    assert sp.clumped_pct == pytest.approx(100 * 900 / 999) and sp.p95_gap_us == pytest.approx(955.0)
    assert sp.cv > 2.5
    assert "90.1 % clumped" in sp.text()


def test_jitter_within_half_the_gap_is_not_a_clump() -> None:
    times = [i * 100e-6 + (20e-6 if i % 2 else 0.0) for i in range(1000)]  # gaps 120, 80, 120, ...
    sp = spacing_of(times, 40.0, LENGTH)
    assert sp is not None and sp.clumped_pct == 0.0 and sp.p5_gap_us == pytest.approx(80.0)


@pytest.mark.parametrize(("times", "rate"), [([0.0, 1e-4], 40.0), ([0.0, 1e-4, 2e-4], 0.0)])
def test_too_little_to_say(times: list[float], rate: float) -> None:
    assert spacing_of(times, rate, LENGTH) is None
