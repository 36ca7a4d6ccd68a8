"""The NDR/PDR search (RFC 9971): the RFC's load classification, relevant bounds and conditional
throughput against its own examples, and the search against model paths with known answers."""

import itertools
from dataclasses import replace

import pytest

from hil.scenarios.mlr_goals import (
    Bound,
    Measurement,
    SearchGoal,
    classify,
    conditional_throughput,
    relevant_bounds,
)
from hil.scenarios.mlrsearch import MlrResult, mlr_search
from hil.scenarios.profiles import FULL, QUICK, RFC2544
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

TRIAL_S = QUICK.capacity_trial_s
MAX_TRIALS = 6
PDR_PCT = 0.5


def t(load: float, loss_ratio: float, duration_s: float = 1.0) -> Measurement:
    return Measurement(load, duration_s, load, load * (1 - loss_ratio), loss_ratio)


# RFC 9971's example goals: RFC 2544's (60f60d0l0e), TST009's (60f120d0l50e), "1s final" (1f120d.5l50e)
RFC2544_GOAL = SearchGoal("RFC2544", 0.0, 60.0, 60.0, 0.0, 0.005)
TST009 = SearchGoal("TST009", 0.0, 60.0, 120.0, 0.5, 0.005)
ONE_S_FINAL = SearchGoal("1s final", 0.005, 1.0, 120.0, 0.5, 0.005)


def test_rfc2544_goal_one_trial_decides_a_load() -> None:
    assert classify([t(10, 0.0, 60)], RFC2544_GOAL) is Bound.LOWER
    assert classify([t(10, 1e-9, 60)], RFC2544_GOAL) is Bound.UPPER  # any loss at all
    assert classify([t(10, 0.01, 1)], RFC2544_GOAL) is Bound.UPPER  # a short high-loss trial too
    assert classify([t(10, 0.0, 1)], RFC2544_GOAL) is Bound.UNDECIDED  # a short low-loss one cannot make a lower bound
    assert classify([], RFC2544_GOAL) is Bound.UNDECIDED


def test_tst009_goal_a_high_loss_first_trial_needs_a_second() -> None:
    assert classify([t(10, 0.0, 60)], TST009) is Bound.LOWER
    assert classify([t(10, 0.01, 60)], TST009) is Bound.UNDECIDED
    assert classify([t(10, 0.01, 60), t(10, 0.0, 60)], TST009) is Bound.LOWER
    assert classify([t(10, 0.01, 60), t(10, 0.01, 60)], TST009) is Bound.UPPER


def test_the_rfcs_worked_example_an_exact_half_counts_as_low_enough() -> None:
    """60 one-second trials without loss and 60 losing 1 %: a lower bound of 1f120d.5l50e."""
    trials = [t(10, 0.0)] * 60 + [t(10, 0.01)] * 60
    assert classify(trials, ONE_S_FINAL) is Bound.LOWER
    assert classify([*trials, t(10, 0.01)], ONE_S_FINAL) is Bound.UPPER


def test_short_low_loss_trials_balance_short_high_loss_ones() -> None:
    goal = SearchGoal("g", 0.0, 10.0, 10.0, 0.5, 0.005)
    assert classify([t(10, 0.1, 6)], goal) is Bound.UPPER  # 6 s of a 10-s sum lost: more than half
    assert classify([t(10, 0.1, 6), t(10, 0.0, 6)], goal) is Bound.UNDECIDED  # balanced by as much low-loss


def test_relevant_bounds_take_an_upper_bound_as_real_and_a_lower_bound_above_it_as_a_fluke() -> None:
    by_load = {10.0: [t(10, 0, 60)], 20.0: [t(20, 0.1, 60)], 30.0: [t(30, 0, 60)], 15.0: [t(15, 0, 1)]}
    assert relevant_bounds(by_load, RFC2544_GOAL) == (10.0, 20.0)  # 15 undecided, 30 above the upper bound
    assert relevant_bounds({10.0: [t(10, 0, 60)]}, RFC2544_GOAL) == (10.0, None)
    assert relevant_bounds({10.0: [t(10, 0.1, 60)]}, RFC2544_GOAL) == (None, 10.0)


def test_conditional_throughput_is_the_load_less_the_quantile_loss_of_full_length_trials() -> None:
    pdr = SearchGoal("PDR", 0.005, 1.0, 3.0, 0.5, 0.005)
    trials = [t(100, 0.004), t(100, 0.001), t(100, 0.002), t(100, 0.5, 0.5)]  # the short one does not count
    # 3 s in all, (1 - 0.5) x 3 = 1.5 s: the lowest loss (1 s) and then the next (0.002)
    assert conditional_throughput(100, trials, pdr) == pytest.approx(100 * (1 - 0.002))
    ndr = SearchGoal("NDR", 0.0, 1.0, 1.0, 0.0, 0.005)
    assert conditional_throughput(100, [t(100, 0.0)], ndr) == 100
    assert conditional_throughput(100, [t(100, 0.0, 0.5)], ndr) is None  # no full-length trial
    # fewer full-length seconds than the goal's sum asks: the missing part counts as all lost
    assert conditional_throughput(100, [t(100, 0.0)], SearchGoal("x", 0.0, 1.0, 5.0, 0.5, 0.005)) == 0.0


@pytest.mark.parametrize(
    "bad",
    [
        {"loss_ratio": 1.0},
        {"exceed_ratio": -0.1},
        {"final_trial_s": 0},
        {"width": 0},
        {"initial_trial_s": 2.0},
    ],
)
def test_a_goal_out_of_range_is_refused(bad: dict) -> None:
    fields = {"name": "g", "loss_ratio": 0.0, "final_trial_s": 1.0, "duration_sum_s": 1.0, "exceed_ratio": 0.0}
    with pytest.raises(ValueError, match="goal g"):
        SearchGoal(**(fields | {"width": 0.005} | bad))


def search(model: Model, profile=QUICK, **kw) -> MlrResult:
    return mlr_search(model, profile.capacity_goals(PDR_PCT), model.line_mbps, gated="PDR", **kw)


def assert_found(model: Model, profile=QUICK) -> MlrResult:
    r = search(model, profile)
    for g in r.goals:
        truth = model.capacity_mbps(profile.capacity_trial_s, 100 * g.goal.loss_ratio)
        assert truth is not None and g.lower_mbps is not None, f"{model}: {g.goal.name} {g.status}"
        error = 100 * (g.lower_mbps - truth) / truth
        limit = 0.5 if g.goal.name == "NDR" else 1.0
        assert abs(error) <= limit, f"{model}: {g.goal.name} {g.lower_mbps:.4f} for {truth:.4f} ({error:+.3f} %)"
        assert g.status in ("regular", "max load is a lower bound"), f"{model}: {g.goal.name} {g.status}"
        if g.upper_mbps is not None:
            assert (g.upper_mbps - g.lower_mbps) / g.upper_mbps <= g.goal.width + 1e-9
        assert g.conditional_mbps is not None and g.conditional_mbps <= g.lower_mbps
    assert len(r.trials) <= MAX_TRIALS, f"{model}: {len(r.trials)} trials"
    assert all(x.duration_s == profile.capacity_trial_s for x in r.trials)  # the goals' initial = final
    return r


CAPACITIES = (2.0, 4.1, 6.4, 10.0, 20.0, 32.0, 45.0, 60.0, 75.0, 90.0, 95.0)


def below_line(length: int) -> list[float]:
    return [c for c in CAPACITIES if c < 0.99 * udp_goodput_mbps(100, length)]


@pytest.mark.parametrize("profile", [QUICK, FULL], ids=["quick", "full"])
@pytest.mark.parametrize("length", [64, 100, 500, 1448])
def test_packet_rate_limits(length: int, profile) -> None:
    for mbps in below_line(length):
        for ring in (0, 32, 256):
            assert_found(PacketRateLimit("pps", length, pps=mbps * 1e6 / (8 * length), ring=ring), profile)


@pytest.mark.parametrize("length", [64, 500, 1448])
def test_bit_rate_limits(length: int) -> None:
    for wire in (2.5, 10.0, 33.0, 50.0, 80.0, 99.0):
        assert_found(BitRateLimit("bitrate", length, wire_mbps=wire))


@pytest.mark.parametrize("drop_share", [0.03, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("length", [64, 500, 1448])
def test_small_buffer_dropping_bursts(length: int, drop_share: float) -> None:
    """The received rate says little here (95 % of the line rate arrives with 40 % of capacity)."""
    for onset in below_line(length):
        assert_found(BurstDrop("burst", length, onset_mbps=onset, drop_share=drop_share))


@pytest.mark.parametrize("length", [64, 500, 1448])
def test_noisy_loss_near_the_capacity(length: int) -> None:
    """30 seeds each, where a trial carries >= 1000 datagrams."""
    for limit in CAPACITIES:
        if limit >= 0.99 * udp_goodput_mbps(100, length) or limit * 1e6 * TRIAL_S / (8 * length) < 1000:
            continue
        for seed in range(30):
            assert_found(NoisyLimit("noisy", length, limit_mbps=limit, seed=seed))


def test_the_benchmark_models() -> None:
    for m in benchmark_models():
        if m.capacity_mbps(TRIAL_S) is None:
            r = search(m)
            assert r.generator_limited and all(g.lower_mbps is None for g in r.goals) and len(r.trials) <= MAX_TRIALS
            assert {g.status for g in r.goals} == {"generator-limited"}
        else:
            assert_found(m)


def test_line_rate_in_one_trial() -> None:
    m = PacketRateLimit("fast", 1448, pps=20000)
    r = search(m)
    assert len(r.trials) == 1 and all(g.lower_mbps == round(m.line_mbps, 4) for g in r.goals)
    assert {g.status for g in r.goals} == {"max load is a lower bound"}


def test_rfc2544_profile_runs_the_rfcs_60_s_trials() -> None:
    ndr, pdr = RFC2544.capacity_goals()
    assert (ndr.final_trial_s, ndr.duration_sum_s, ndr.loss_ratio, ndr.exceed_ratio) == (60.0, 60.0, 0.0, 0.0)
    assert pdr.loss_ratio == 0.005 and RFC2544.points_name == "full"
    r = assert_found(PacketRateLimit("pps", 500, pps=8000), RFC2544)
    assert r.total_trial_s == 60.0 * len(r.trials)


def test_generator_limited_is_reported_not_blamed_on_the_dut() -> None:
    for gen in (5.0, 40.0, 90.0):
        r = search(GeneratorShort("gen", 1448, generator_mbps=gen, path_mbps=95.0))
        assert r.generator_limited and all(g.lower_mbps is None for g in r.goals)
        assert len(r.trials) == 2 and r.counted_at == [None, None]  # tried, then once more: two trials
        assert r.trials[0].load_mbps == r.trials[1].load_mbps


def test_a_short_generator_on_a_path_that_loses_even_below_it_still_finds_the_path() -> None:
    m = GeneratorShort("gen", 1448, generator_mbps=60.0, path_mbps=30.0)
    r = search(m)
    assert r.trials[0].generator_limited and r.trials[1].generator_limited  # the repeat counts as a trial
    assert r.counted_at[1] == 60.0  # counted at the rate it did send
    assert not r.generator_limited
    assert_found(m)


def test_a_generator_short_once_is_retried_and_the_search_goes_on() -> None:
    calls: list[tuple[float, float]] = []
    good = PacketRateLimit("pps", 1448, pps=93e6 / (8 * 1448), ring=0)

    def once_short(load: float, duration_s: float) -> Measurement:
        calls.append((load, duration_s))
        m = good(load, duration_s)
        return replace(m, sent_mbps=0.5 * load, generator_limited=True) if len(calls) == 1 else m

    r = mlr_search(once_short, QUICK.capacity_goals(PDR_PCT), good.line_mbps, gated="PDR")
    assert not r.generator_limited and calls[0] == calls[1] and r.counted_at[0] is None
    truth = good.capacity_mbps(TRIAL_S, PDR_PCT)
    pdr = r.goal("PDR").lower_mbps
    assert truth is not None and pdr is not None and abs(pdr - truth) <= 0.01 * truth
    assert len(r.trials) <= MAX_TRIALS + 1  # the repeat counted


def test_bounds_close_in_and_every_trial_counts_for_both_goals() -> None:
    r = assert_found(BurstDrop("burst", 1448, onset_mbps=40.0, drop_share=0.1))
    loads = [load for load, _ in r.counted()]
    assert len(set(loads)) == len(loads)  # never the same load twice with these goals (one trial decides)
    ndr, pdr = r.goal("NDR"), r.goal("PDR")
    assert ndr.lower_mbps is not None and pdr.lower_mbps is not None and ndr.lower_mbps < pdr.lower_mbps
    assert r.total_trial_s == sum(x.duration_s for x in r.trials)


def test_a_path_that_always_loses_has_no_lower_bound() -> None:
    def lossy(load: float, duration_s: float) -> Measurement:
        return Measurement(load, duration_s, load, 0.98 * load, 0.02)

    r = mlr_search(lossy, QUICK.capacity_goals(PDR_PCT), 95.64, max_trials=6)
    assert {g.status for g in r.goals} == {"no lower bound"} and len(r.trials) == 6
    assert all(g.lower_mbps is None and g.conditional_mbps is None for g in r.goals)


def test_a_noisy_path_under_goals_with_an_exceed_ratio_measures_a_load_again() -> None:
    """TST009-like goals (duration sum two final trials, exceed ratio 0.5): a load that lost once
    is measured again before it counts either way."""
    goals = tuple(replace(g, duration_sum_s=2 * TRIAL_S, exceed_ratio=0.5) for g in QUICK.capacity_goals(PDR_PCT))
    for seed in range(20):
        m = NoisyLimit("noisy", 1448, limit_mbps=40.0, seed=seed)
        r = mlr_search(m, goals, m.line_mbps, gated="PDR")
        loads = [load for load, _ in r.counted()]
        assert len(loads) > len(set(loads)) or all(g.regular for g in r.goals)
        for g in r.goals:
            truth = m.capacity_mbps(TRIAL_S, 100 * g.goal.loss_ratio)
            assert g.lower_mbps is not None and truth is not None and abs(g.lower_mbps - truth) <= 0.01 * truth
        assert len(r.trials) <= 8


def test_the_gated_goal_gets_the_last_trials() -> None:
    """A path whose losses do not grow with the load (none up to 50 Mbit/s, 0.2 % up to 70, 2 %
    above): no estimate, both goals bisect, and the NDR's loads are the lower ones, so it would
    be measured first every time. With 7 trials the last 3 go to the PDR: its bounds close in
    around 70 (without the reservation they stayed at 58-86 Mbit/s)."""

    def steps(load: float, duration_s: float) -> Measurement:
        loss = 0.0 if load <= 50.0 else (0.002 if load <= 70.0 else 0.02)
        return Measurement(load, duration_s, load, load * (1 - loss), loss)

    r = mlr_search(steps, QUICK.capacity_goals(PDR_PCT), 95.64, max_trials=7, gated="PDR")
    pdr = r.goal("PDR")
    assert len(r.trials) == 7 and pdr.lower_mbps is not None and pdr.upper_mbps is not None
    assert 65.0 <= pdr.lower_mbps <= 70.0 < pdr.upper_mbps <= 75.0, pdr


def test_bad_arguments() -> None:
    m = PacketRateLimit("pps", 1448)
    with pytest.raises(ValueError):
        mlr_search(m, (), 95.0)
    with pytest.raises(ValueError):
        mlr_search(m, QUICK.capacity_goals(), 0)


def test_the_upper_bound_never_rises() -> None:
    r = search(BurstDrop("burst", 500, onset_mbps=20.0, drop_share=0.3))
    by_load: dict[float, list[Measurement]] = {}
    his = []
    for load, m in r.counted():
        by_load.setdefault(load, []).append(m)
        his.append(relevant_bounds(by_load, r.goals[1].goal)[1] or 1e9)
    assert all(b <= a for a, b in itertools.pairwise(his))


def test_a_goal_no_threshold_checks_stops_at_its_budget_once_the_gated_one_is_found() -> None:
    """A path that loses 0.01 % at any load: the PDR is the max load, the NDR has no lower bound
    to find, and gets trials up to the budget."""

    def sporadic(load: float, duration_s: float) -> Measurement:
        return Measurement(load, duration_s, load, load * (1 - 1e-4), 1e-4)

    r = mlr_search(sporadic, QUICK.capacity_goals(PDR_PCT), 95.64, gated="PDR", after_gated_trials=5)
    assert r.goal("PDR").status == "max load is a lower bound" and len(r.trials) == 5
    assert r.goal("NDR").status == "no lower bound"


def test_a_loss_that_hardly_grows_with_the_load_places_no_estimate_below_zero() -> None:
    """The emulated board at 500 B: 0.1-0.4 % lost at every load from 40 to 44 Mbit/s, none at 20.
    The line through those losses crosses zero below 0 Mbit/s; the NDR is bisected instead."""
    losses = {44.17: 0.0038, 43.19: 0.0012, 42.64: 0.0018}

    def board(load: float, duration_s: float) -> Measurement:
        loss = losses.get(round(load, 2), 0.0038 if load > 36.0 else 0.0)
        return Measurement(load, duration_s, load, load * (1 - loss), loss)

    r = mlr_search(board, QUICK.capacity_goals(PDR_PCT), 44.17, gated="PDR", max_trials=12)
    ndr = r.goal("NDR")
    assert ndr.lower_mbps is not None and ndr.upper_mbps is not None
    assert 35.8 <= ndr.lower_mbps <= 36.0 < ndr.upper_mbps and ndr.regular, (ndr, [t.load_mbps for t in r.trials])


def test_a_noisy_start_does_not_walk_the_search_up_one_width_at_a_time() -> None:
    """Clean-clone run 29, DUT -> PC at 500 B on a host that kept the DUT off its core: the
    first trials lost 0.8-12 % (noise, not the path), the estimates fell 3 % short of the rate the
    path carried, and the goals stepped up from them one width at a time (10 trials). A step
    above an estimate that passes ends that goal's estimates: each goal steps above once, then
    bisects. (The two goals' steps differ by a hair here, so this does not test that one
    measured load teaches every goal that nominated it.)"""
    noisy_first = [(0.9584, 0.00812), (0.8492, 0.119507), (0.9442, 0.027724)]  # received / load, loss
    calls = []

    def starved(load: float, duration_s: float) -> Measurement:
        calls.append(load)
        if len(calls) <= len(noisy_first):
            share, loss = noisy_first[len(calls) - 1]
            return Measurement(load, duration_s, load, share * load, loss)
        loss = 0.0 if load <= 80.2 else 0.02
        return Measurement(load, duration_s, load, load * (1 - loss), loss)

    r = mlr_search(starved, QUICK.capacity_goals(PDR_PCT), 88.3392, gated="PDR")
    pdr = r.goal("PDR")
    assert pdr.lower_mbps is not None and 80.2 * 0.99 <= pdr.lower_mbps <= 80.2, calls
    assert len(r.trials) <= 9, calls


def test_a_path_that_forwards_less_when_overloaded_is_found_in_few_trials() -> None:
    """A queue at 20,000 frames/s (the RFC 2544 family's model device, 64-byte frames): far above
    its rate it forwards a little less than its rate (the queue's own overhead), so the estimate
    from the first trial is a little low and the step above it is a lower bound too. The next
    step is four times wider, not a bisection of the whole range (which took the PDR 10 trials on
    the model device)."""
    capacity = 10.24  # Mbit/s of 64-byte frames: 20,000 frames/s

    def queue(load: float, duration_s: float) -> Measurement:
        received = load if load <= capacity else capacity if load < 2 * capacity else 0.99 * capacity
        return Measurement(load, duration_s, load, received, (load - received) / load)

    goals = QUICK.capacity_goals(PDR_PCT)
    r = mlr_search(queue, goals, 69.1)
    ndr, pdr = r.goal("NDR"), r.goal("PDR")
    assert ndr.regular and pdr.regular, (ndr, pdr)
    assert ndr.lower_mbps is not None and pdr.lower_mbps is not None
    assert capacity * 0.995 <= ndr.lower_mbps <= capacity
    true_pdr = capacity / (1 - PDR_PCT / 100)
    assert true_pdr * 0.99 <= pdr.lower_mbps <= true_pdr
    assert len(r.trials) <= 7, [round(x.load_mbps, 3) for x in r.trials]


def test_a_tester_short_at_the_max_load_counts_its_lossy_trial_at_once() -> None:
    """The frame tester at 64 B on a busy host reaches 87 % of its calibrated ceiling; the path
    behind it (a queue at 20,000 frames/s) loses 85 % of what it sent. That trial says where the
    path's rate is: counted at the rate sent, no repeat, estimates from it (count_short_lossy)."""
    capacity, reach = 10.24, 63.4

    def short_tester(load: float, duration_s: float) -> Measurement:
        sent = min(load, reach)
        received = min(sent, capacity)
        return Measurement(load, duration_s, sent, received, (sent - received) / sent, sent < 0.97 * load)

    goals = QUICK.capacity_goals(PDR_PCT)
    r = mlr_search(short_tester, goals, 72.66, count_short_lossy=True)
    assert r.counted_at[0] == reach  # the first trial counted at once, at the rate sent
    ndr = r.goal("NDR")
    assert ndr.regular and ndr.lower_mbps is not None and capacity * 0.995 <= ndr.lower_mbps <= capacity
    assert len(r.trials) <= 6, [round(x.load_mbps, 3) for x in r.trials]
    slow = mlr_search(short_tester, goals, 72.66)  # without: repeated, and no estimate from it
    assert slow.counted_at[0] is None and len(slow.trials) > len(r.trials)


def test_a_trial_that_vouches_for_less_than_its_load_counts_there() -> None:
    """A loss-free trial whose generator the host stalled (counts_at_mbps: what it sent, 1.5 %
    below the load) counts at what it sent: a path of 50 Mbit/s is never reported above it."""
    truth = 50.0

    def stalled(load: float, duration: float) -> Measurement:
        sent = load * 0.985
        loss = 0.0 if sent <= truth else (sent - truth) / sent
        return Measurement(load, duration, sent, sent * (1 - loss), loss, counts_at_mbps=sent if loss == 0 else None)

    r = mlr_search(stalled, QUICK.capacity_goals(PDR_PCT), 100.0, max_trials=12)
    ndr = r.goal("NDR").lower_mbps
    assert ndr is not None and ndr <= truth, (ndr, r.counted_at)
    assert all(at is None or at <= t.load_mbps for at, t in zip(r.counted_at, r.trials, strict=True))
    assert any(at is not None and at < t.load_mbps for at, t in zip(r.counted_at, r.trials, strict=True))
