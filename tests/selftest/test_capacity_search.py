import itertools
from dataclasses import replace

import pytest

from hil.scenarios.capacity_search import Trial, goal_met, search, short_trial_s
from hil.theory import udp_goodput_mbps
from tests.support.capacity_models import (
    BitRateLimit,
    BurstDrop,
    GeneratorShort,
    Model,
    NoisyLimit,
    PacketRateLimit,
    benchmark_models,
)

pytestmark = pytest.mark.selftest

TRIAL_S = 1.5  # the quick profile's capacity_trial_s
GOAL_PCT = 0.5
MAX_TRIALS = 6


def run(model: Model, trial_s: float = TRIAL_S):
    return search(model, model.line_mbps, trial_s, model.target_pct)


def assert_found(model: Model, trial_s: float = TRIAL_S) -> None:
    r = run(model, trial_s)
    capacity = model.capacity_mbps(trial_s)
    assert capacity is not None
    assert r.confirmed and r.rate_mbps is not None, f"{model}: nothing confirmed in {len(r.trials)} trials"
    error = 100 * (r.rate_mbps - capacity) / capacity
    assert abs(error) <= GOAL_PCT, f"{model}: found {r.rate_mbps:.4f} for {capacity:.4f} ({error:+.3f} %)"
    assert len(r.trials) <= MAX_TRIALS, f"{model}: {len(r.trials)} trials"
    assert goal_met(r)
    last = r.trials[-1]
    assert last.passed and last.offered_mbps == r.rate_mbps and last.duration_s == trial_s  # confirmed at full length
    assert all(t.duration_s in (trial_s, short_trial_s(trial_s)) for t in r.trials)


CAPACITIES = (2.0, 4.1, 6.4, 10.0, 20.0, 32.0, 45.0, 60.0, 75.0, 90.0, 95.0)


def below_line(length: int) -> list[float]:
    return [c for c in CAPACITIES if c < 0.995 * udp_goodput_mbps(100, length)]


@pytest.mark.parametrize("trial_s", [1.5, 5.0])
@pytest.mark.parametrize("length", [64, 100, 500, 1448])
def test_packet_rate_limits(length: int, trial_s: float):
    for mbps in below_line(length):
        for ring in (0, 32, 256):
            assert_found(PacketRateLimit("pps", length, pps=mbps * 1e6 / (8 * length), ring=ring), trial_s)


@pytest.mark.parametrize("length", [64, 500, 1448])
def test_bit_rate_limits(length: int):
    for wire in (2.5, 10.0, 33.0, 50.0, 80.0, 99.0):
        assert_found(BitRateLimit("bitrate", length, wire_mbps=wire))


@pytest.mark.parametrize("drop_share", [0.005, 0.03, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("length", [64, 500, 1448])
def test_small_buffer_dropping_bursts(length: int, drop_share: float):
    """The received rate says little here (95 % of the line rate arrives with 40 % of capacity)."""
    for onset in below_line(length):
        assert_found(BurstDrop("burst", length, onset_mbps=onset, drop_share=drop_share))


@pytest.mark.parametrize("length", [64, 500, 1448])
def test_noisy_loss_near_the_capacity(length: int):
    """30 seeds each; only capacities where a short trial carries >= 1000 datagrams (a 0.1 %
    target cannot be resolved in fewer)."""
    for limit in CAPACITIES:
        if limit >= 0.995 * udp_goodput_mbps(100, length) or limit * 1e6 * 0.5 / (8 * length) < 1000:
            continue
        for seed in range(30):
            assert_found(NoisyLimit("noisy", length, limit_mbps=limit, seed=seed))


@pytest.mark.parametrize("target_pct", [0.0, 1.0])
def test_other_loss_targets(target_pct: float):
    assert_found(PacketRateLimit("pps", 500, target_pct, pps=8000))
    assert_found(BurstDrop("burst", 1448, target_pct, onset_mbps=40.0, drop_share=0.2))


def test_the_benchmark_models():
    for m in benchmark_models():
        if m.capacity_mbps(TRIAL_S) is None:
            r = run(m)
            assert r.generator_limited and r.rate_mbps is None and len(r.trials) <= MAX_TRIALS
        else:
            assert_found(m)


def test_line_rate_in_two_trials():
    m = PacketRateLimit("fast", 1448, pps=20000)
    r = run(m)
    assert r.rate_mbps == m.line_mbps and r.confirmed and len(r.trials) == 2
    assert [t.duration_s for t in r.trials] == [short_trial_s(TRIAL_S), TRIAL_S]  # short, then full length


def test_generator_limited_is_reported_not_blamed_on_the_dut():
    for gen in (5.0, 40.0, 90.0):
        m = GeneratorShort("gen", 1448, generator_mbps=gen, path_mbps=95.0)
        r = run(m)
        assert r.generator_limited and r.rate_mbps is None and not r.confirmed
        assert len(r.trials) == 2  # tried, then once more at the same rate and length: two trials
        assert r.trials[0].offered_mbps == r.trials[1].offered_mbps and r.trials[0].duration_s == r.trials[1].duration_s


def test_a_short_generator_on_a_path_that_loses_even_below_it_still_finds_the_path():
    m = GeneratorShort("gen", 1448, generator_mbps=60.0, path_mbps=30.0)
    assert m.capacity_mbps(TRIAL_S) is not None
    r = run(m)
    assert r.trials[0].generator_limited and r.trials[1].generator_limited  # the repeat counts as a trial
    assert not r.generator_limited
    assert_found(m)


def test_a_generator_short_once_is_retried_and_the_search_goes_on():
    calls: list[tuple[float, float]] = []
    good = PacketRateLimit("pps", 1448, pps=93e6 / (8 * 1448), ring=0)

    def once_short(offered: float, duration_s: float) -> Trial:
        calls.append((offered, duration_s))
        t = good(offered, duration_s)
        return replace(t, sent_mbps=0.5 * offered, generator_limited=True, passed=False) if len(calls) == 1 else t

    r = search(once_short, good.line_mbps, TRIAL_S, 0.1)
    capacity = good.capacity_mbps(TRIAL_S)
    assert not r.generator_limited and r.confirmed and r.rate_mbps is not None
    assert abs(r.rate_mbps - capacity) <= GOAL_PCT / 100 * capacity
    assert r.trials[0].generator_limited and calls[0] == calls[1]  # both kept in the log
    assert len(r.trials) <= MAX_TRIALS  # the repeat counted


def test_a_rate_that_fails_its_confirmation_is_searched_below():
    outcomes = iter([True, False])  # line rate passes its short trial, then fails its confirmation

    def flaky(offered: float, duration_s: float) -> Trial:
        ok = next(outcomes, offered <= 90.0)
        received = offered if ok else min(offered, 90.0)
        loss = 100 * (offered - received) / offered if not ok and offered > 90.0 else (0.0 if ok else 1.0)
        return Trial(offered, offered, received, loss, False, ok)

    r = search(flaky, 95.64, TRIAL_S, 0.1)
    assert r.confirmed and r.rate_mbps is not None and 89.55 <= r.rate_mbps <= 90.0 and len(r.trials) <= MAX_TRIALS
    assert not r.trials[1].passed and r.trials[1].duration_s == TRIAL_S and r.trials[1].offered_mbps == 95.64


def test_bounds_are_logged_and_close_in():
    m = BurstDrop("burst", 1448, onset_mbps=40.0, drop_share=0.1)
    r = run(m)
    assert r.rate_mbps is not None
    his = [t.hi_mbps for t in r.trials]
    assert all(b <= a for a, b in itertools.pairwise(his))  # the upper bound never rises
    assert r.trials[-1].lo_mbps == r.rate_mbps and r.hi_mbps - r.lo_mbps <= GOAL_PCT / 100 * r.lo_mbps
    assert r.total_trial_s == sum(t.duration_s for t in r.trials)


def test_a_path_that_always_loses_confirms_nothing():
    def lossy(offered: float, duration_s: float) -> Trial:
        return Trial(offered, offered, 0.98 * offered, 2.0, False, False)

    r = search(lossy, 95.64, TRIAL_S, 0.1, max_trials=6)
    assert r.rate_mbps is None and not r.confirmed and len(r.trials) == 6


def test_bad_arguments():
    m = PacketRateLimit("pps", 1448)
    with pytest.raises(ValueError):
        search(m, 0, TRIAL_S, 0.1)
    with pytest.raises(ValueError):
        search(m, 95.0, 0, 0.1)
    with pytest.raises(ValueError):
        search(m, 95.0, TRIAL_S, 100.0)


def test_a_receiver_rate_below_the_datagram_count_does_not_send_the_search_to_half_the_rate():
    """Seen on the virtual bench (500 B, full profile): the receiver's rate, taken over its own
    slightly longer interval, read 86.05 where the datagram counts said 86.53 arrived; the
    estimate then sat above the upper bound and the search bisected from zero."""
    path = PacketRateLimit("pps", 500, pps=86.5e6 / (8 * 500), ring=0)

    def slow_clock(offered: float, duration_s: float) -> Trial:
        t = path(offered, duration_s)
        return replace(t, received_mbps=0.995 * t.received_mbps)

    r = search(slow_clock, path.line_mbps, TRIAL_S, 0.1)
    capacity = path.capacity_mbps(TRIAL_S)
    assert r.confirmed and r.rate_mbps is not None and len(r.trials) <= MAX_TRIALS
    assert r.trials[1].offered_mbps > 0.98 * capacity  # the second trial right below the estimate
    assert 0 < capacity - r.rate_mbps <= 0.01 * capacity  # 0.5 % of the rate + the clocks' 0.5 %


def test_a_search_running_out_of_trials_confirms_what_passed():
    """A path whose losses say nothing about where they start (0.2 % at any rate above 50):
    with two trials left the search confirms the highest rate that passed, goal not met."""

    def vague(offered: float, duration_s: float) -> Trial:
        loss = 0.0 if offered <= 50.0 else 0.2
        return Trial(offered, offered, offered * (1 - loss / 100), loss, False, loss <= 0.1)

    r = search(vague, 95.64, TRIAL_S, 0.1, max_trials=8)
    assert r.confirmed and r.rate_mbps is not None and r.rate_mbps <= 50.0 and len(r.trials) <= 8
    assert not goal_met(r) and r.trials[-1].duration_s == TRIAL_S and r.trials[-1].offered_mbps == r.rate_mbps
