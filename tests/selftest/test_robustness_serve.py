"""The real clients' wait after a robustness class (hil.robustness.serve): the DUT's time only.

A try whose server never started on a host off the DUT's path (the peer over its management link)
is the bench's: it is left out of the wait and counted apart; a try that reached the DUT and failed
counts; a bench that never starts a server is a bench error, never a client "not served".

On a clock of their own (VirtualClock: the wait's arithmetic, not the machine's speed): with real
sleeps, the beside lane of `./suite test --busy 1` once slept 1.2 s too long behind the matrix's
bench and failed a 120-ms tolerance."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hil.errors import BenchError, DutError
from hil.robustness import serve
from hil.robustness.serve import BenchRetry, _until_served

NORMAL_S = 0.05


class VirtualClock:
    """`time` for hil.robustness.serve and the tries: `sleep` moves `monotonic` on, nothing waits."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


CLOCK = VirtualClock()


@pytest.fixture(autouse=True)
def virtual_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(serve, "time", CLOCK)
    yield


class Tries:
    """Each try in turn: 'bench' (its server did not start), 'dut' (refused through the DUT), or
    'ok' (served); each takes `took_s`, the client's part the last `client_s` of it."""

    def __init__(self, *outcomes: str, took_s: float = 0.1, client_s: float = NORMAL_S) -> None:
        self.outcomes, self.took_s, self.client_s = list(outcomes), took_s, client_s

    def __call__(self) -> tuple[float, float]:
        outcome = self.outcomes.pop(0)
        CLOCK.sleep(self.took_s - self.client_s)  # the server's start
        sent_at = CLOCK.monotonic()
        CLOCK.sleep(self.client_s)
        if outcome == "bench":
            raise BenchRetry("iperf 2 server did not listen on port 5001 within 5 s")
        if outcome == "dut":
            raise DutError("connection refused")
        return sent_at, CLOCK.monotonic()


def test_a_slow_server_start_is_not_the_dut_wait() -> None:
    served = _until_served("client", Tries("ok", took_s=0.4), give_up_s=5, normal_s=NORMAL_S)
    assert served.delay_ms is not None and served.delay_ms < 40, served
    assert (served.tries, served.bench_tries) == (1, 0)


def test_tries_whose_server_never_started_are_left_out_and_counted() -> None:
    served = _until_served("client", Tries("bench", "bench", "ok", took_s=0.3), give_up_s=5, normal_s=NORMAL_S)
    assert served.delay_ms is not None and served.delay_ms < 40, served
    assert (served.tries, served.bench_tries) == (3, 2)
    assert served.last_error is not None and "not counted" in served.last_error


def test_a_client_refused_through_the_dut_waits() -> None:
    served = _until_served("client", Tries("dut", "dut", "ok", took_s=0.2), give_up_s=5, normal_s=NORMAL_S)
    assert served.delay_ms is not None and served.delay_ms >= 350, served  # two failed tries and their pauses
    assert served.last_error == "connection refused"


def test_a_bench_try_after_the_dut_failed_is_left_out_of_the_wait() -> None:
    mixed = _until_served("client", Tries("dut", "bench", "ok", took_s=0.2), give_up_s=5, normal_s=NORMAL_S)
    dut_only = _until_served("client", Tries("dut", "ok", took_s=0.2), give_up_s=5, normal_s=NORMAL_S)
    assert mixed.delay_ms is not None and dut_only.delay_ms is not None
    assert abs(mixed.delay_ms - dut_only.delay_ms) < 120, (mixed, dut_only)  # the bench's 0.2 s left out


def test_a_client_never_served_has_no_wait() -> None:
    served = _until_served("client", Tries(*["dut"] * 50, took_s=0.1), give_up_s=1.5, normal_s=NORMAL_S)
    assert served.delay_ms is None and served.tries >= 2


def test_a_bench_that_never_starts_a_server_is_a_bench_error() -> None:
    with pytest.raises(BenchError, match=r"never started .* without the DUT") as err:
        _until_served("the PC's client to the peer's server", Tries(*["bench"] * 50, took_s=0.1), give_up_s=1.0,
                      normal_s=NORMAL_S)  # fmt: skip
    assert not isinstance(err.value, BenchRetry)
