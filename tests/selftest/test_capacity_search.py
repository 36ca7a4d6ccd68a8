from dataclasses import replace

import pytest

from hil.scenarios.capacity import Trial, search

pytestmark = pytest.mark.selftest


def link(capacity: float, generator_max: float = 1e9):
    """A simulated link: loss above capacity, a generator that tops out at generator_max."""

    def trial(offered: float) -> Trial:
        sent = min(offered, generator_max)
        received = min(sent, capacity)
        loss = 100.0 * (sent - received) / sent
        limited = sent < 0.97 * offered
        return Trial(offered, sent, received, loss, limited, loss <= 0.1 and not limited)

    return trial


def test_finds_capacity_within_resolution_in_few_trials():
    r = search(link(93.0), max_mbps=95.64, resolution_mbps=1.0)
    assert r.confirmed and 92.0 <= r.rate_mbps <= 93.0
    assert len(r.trials) <= 10
    assert r.trials[-1].offered_mbps == r.rate_mbps  # the last trial confirms


def test_rate_at_line_rate_passes_first_time():
    r = search(link(200.0), max_mbps=95.64, resolution_mbps=1.0)
    assert r.rate_mbps == 95.64 and len(r.trials) == 2


def test_generator_limited_is_reported_not_blamed_on_the_dut():
    r = search(link(95.0, generator_max=40.0), max_mbps=95.64, resolution_mbps=1.0)
    assert r.generator_limited and r.rate_mbps is None and len(r.trials) == 2  # tried, then once more


def test_a_generator_short_once_is_retried_and_the_search_goes_on():
    calls = []
    good = link(95.0)

    def once_short(offered: float) -> Trial:
        calls.append(offered)
        t = good(offered)
        return replace(t, generator_limited=True, passed=False) if len(calls) == 1 else t

    r = search(once_short, max_mbps=95.64, resolution_mbps=1.0)
    assert not r.generator_limited and r.confirmed and 94.0 <= r.rate_mbps <= 95.1
    assert r.trials[0].generator_limited and calls[0] == calls[1] == 95.64  # both kept in the log


def test_nothing_passes():
    r = search(link(0.0001), max_mbps=95.64, resolution_mbps=1.0)
    assert r.rate_mbps is None and len(r.trials) <= 10


def test_bad_arguments():
    with pytest.raises(ValueError):
        search(link(1), max_mbps=0, resolution_mbps=1)


def test_a_rate_that_fails_its_confirmation_is_searched_below():
    outcomes = iter([True, False])  # line rate passes once, then fails its confirmation

    def flaky(offered: float) -> Trial:
        ok = next(outcomes, offered <= 90.0)
        return Trial(offered, offered, offered, 0.0 if ok else 1.0, False, ok)

    r = search(flaky, max_mbps=95.64, resolution_mbps=1.0)
    assert r.confirmed and 89.0 <= r.rate_mbps <= 90.0 and len(r.trials) <= 10
