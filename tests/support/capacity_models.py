"""Model paths with known answers, for the NDR/PDR search's self-tests and its benchmark
(benchmarks/capacity_search.py). Each model is a trial function
`model(load_mbps, duration_s) -> Measurement` as hil/scenarios/families/capacity.py builds one over
iperf, and knows the true answer: `capacity_mbps(trial_s, loss_pct)`, the highest load a
full-length trial of `trial_s` carries with loss at or below `loss_pct` (the model's
`target_pct` when not given; 0 is the no-drop rate). Rates are UDP goodput (payload) in Mbit/s.

What a model does not have: per-datagram timing. The buffer models are fluid: a ring of B
datagrams fills when the offered rate exceeds what the device forwards, so a short trial loses
B datagrams less than it otherwise would (short trials are optimistic; the search confirms with
full-length ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hil.scenarios.mlr_goals import Measurement
from hil.theory import udp_goodput_mbps
from hil.traffic.roles import GENERATOR_TOLERANCE

LINK_MBPS = 100.0
LOSS_TARGET_PCT = 0.1


@dataclass
class Model:
    """Base: a generator that reaches `generator_mbps`, a path that receives `_received`."""

    name: str
    length: int  # datagram payload, bytes
    target_pct: float = LOSS_TARGET_PCT
    generator_mbps: float = 1e9

    @property
    def line_mbps(self) -> float:
        return udp_goodput_mbps(LINK_MBPS, self.length)

    def _received(self, sent_mbps: float, duration_s: float) -> float:
        raise NotImplementedError

    def capacity_mbps(self, trial_s: float, loss_pct: float | None = None) -> float | None:
        """The true rate for trials of `trial_s` at `loss_pct` (None: the model's target; None
        returned: the generator is the limit)."""
        return self._capacity(trial_s, self.target_pct if loss_pct is None else loss_pct)

    def _capacity(self, trial_s: float, loss_pct: float) -> float | None:
        raise NotImplementedError

    def __call__(self, load_mbps: float, duration_s: float) -> Measurement:
        sent = min(load_mbps, self.generator_mbps, self.line_mbps)
        received = min(sent, self._received(sent, duration_s))
        loss = round((sent - received) / sent, 11) if sent > 0 else 0.0  # no float dust
        limited = sent < GENERATOR_TOLERANCE * load_mbps
        return Measurement(load_mbps, duration_s, sent, received, loss, limited)


@dataclass
class PacketRateLimit(Model):
    """A device that forwards at most `pps` frames per second (seed 004's bridge kind), with a
    receive ring of `ring` datagrams that absorbs the first excess of a trial."""

    pps: float = 8000.0
    ring: int = 32

    @property
    def rate_mbps(self) -> float:
        return self.pps * self.length * 8 / 1e6

    def _ring_mbit(self) -> float:
        return self.ring * self.length * 8 / 1e6

    def _received(self, sent_mbps: float, duration_s: float) -> float:
        return self.rate_mbps + self._ring_mbit() / duration_s

    def _capacity(self, trial_s: float, loss_pct: float) -> float | None:
        # loss (sent - received) / sent <= target  <=>  sent <= received / (1 - target)
        return min(self.line_mbps, (self.rate_mbps + self._ring_mbit() / trial_s) / (1 - loss_pct / 100))


@dataclass
class BitRateLimit(Model):
    """A shaper (token bucket) at `wire_mbps` on the wire, `bucket_bytes` deep: goodput
    capacity = the link formula at the shaper's rate."""

    wire_mbps: float = 50.0
    bucket_bytes: int = 8000

    @property
    def rate_mbps(self) -> float:
        return udp_goodput_mbps(self.wire_mbps, self.length)

    def _received(self, sent_mbps: float, duration_s: float) -> float:
        bucket_goodput_mbit = self.bucket_bytes * 8 / 1e6 * self.rate_mbps / self.wire_mbps
        return self.rate_mbps + bucket_goodput_mbit / duration_s

    def _capacity(self, trial_s: float, loss_pct: float) -> float | None:
        return min(self.line_mbps, self._received(0.0, trial_s) / (1 - loss_pct / 100))


@dataclass
class BurstDrop(Model):
    """A small buffer behind a paced generator: the generator sends each timer tick's datagrams
    back to back; above `onset_mbps` a burst no longer fits the buffer and the device drops the
    share `drop_share` of the excess (it forwards the rest while the burst arrives). Loss grows
    non-linearly, as drop_share x (1 - onset / rate), and the received rate stays high: at the
    line rate it says little about where the loss starts."""

    onset_mbps: float = 40.0
    drop_share: float = 0.1

    def _received(self, sent_mbps: float, duration_s: float) -> float:
        if sent_mbps <= self.onset_mbps:
            return sent_mbps
        return sent_mbps - self.drop_share * (sent_mbps - self.onset_mbps)

    def _capacity(self, trial_s: float, loss_pct: float) -> float | None:
        # drop_share x (1 - onset / r) = target
        if self.drop_share <= loss_pct / 100:
            return self.line_mbps  # it never loses as much as the target
        return min(self.line_mbps, self.onset_mbps / (1 - loss_pct / 100 / self.drop_share))


@dataclass
class NoisyLimit(Model):
    """A bit-rate limit whose forwarding rate wanders from trial to trial (CPU frequency, other
    work on the device): each trial draws it uniformly within +-`jitter_pct` of `limit_mbps`
    (by default as wide as the loss target), and the loss is counted in whole datagrams over the
    trial. Near the capacity a trial's loss thus lands randomly between none and twice the
    target; well below it there is none. The known capacity is where the loss meets the target
    at the nominal limit (a trial there loses the target on average)."""

    limit_mbps: float = 40.0
    jitter_pct: float = LOSS_TARGET_PCT
    seed: int = 0
    rng: np.random.Generator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def _received(self, sent_mbps: float, duration_s: float) -> float:
        limit = self.limit_mbps * (1 + self.rng.uniform(-1, 1) * self.jitter_pct / 100)
        datagram_mbit = 8 * self.length / 1e6
        sent = round(sent_mbps * duration_s / datagram_mbit)
        lost = max(0, round((sent_mbps - limit) * duration_s / datagram_mbit))
        return sent_mbps * (sent - lost) / sent if sent else 0.0

    def _capacity(self, trial_s: float, loss_pct: float) -> float | None:
        return min(self.line_mbps, self.limit_mbps / (1 - loss_pct / 100))


@dataclass
class GeneratorShort(Model):
    """A generator that tops out at `generator_mbps` on a path that carries `path_mbps`: the
    search must say "generator-limited", never a number. (With path_mbps below the generator's
    reach it is an ordinary bit-rate limit: the loss at the rate sent still finds it.)"""

    path_mbps: float = 95.0

    def _received(self, sent_mbps: float, duration_s: float) -> float:
        return min(sent_mbps, self.path_mbps)

    def _capacity(self, trial_s: float, loss_pct: float) -> float | None:
        carried = min(self.line_mbps, self.path_mbps / (1 - loss_pct / 100))
        return None if self.generator_mbps < GENERATOR_TOLERANCE * carried else carried


def thesis_packet_rates() -> list[PacketRateLimit]:
    """Packet-rate limits at the rates the thesis found by hand (64 B 4.1, 100 B 6.4, 500 B 32,
    1448 B 90 Mbit/s) - and far below the line rate, as the issue measured."""
    return [
        PacketRateLimit(f"pps-{length}B-{mbps:g}", length, pps=mbps * 1e6 / (8 * length))
        for length, mbps in ((64, 4.1), (100, 6.4), (500, 32.0), (1448, 90.0))
    ]


def benchmark_models(seed: int = 0) -> list[Model]:
    """One of each kind, at capacities from 2 to 95 Mbit/s."""
    return [
        *thesis_packet_rates(),
        PacketRateLimit("pps-1448B-2", 1448, pps=2e6 / (8 * 1448)),
        BitRateLimit("bitrate-500B-50w", 500, wire_mbps=50.0),
        BitRateLimit("bitrate-1448B-10w", 1448, wire_mbps=10.0),
        BurstDrop("burst-1448B-40", 1448, onset_mbps=40.0, drop_share=0.1),
        BurstDrop("burst-500B-20", 500, onset_mbps=20.0, drop_share=0.3),
        BurstDrop("burst-1448B-90", 1448, onset_mbps=90.0, drop_share=0.05),
        NoisyLimit("noisy-1448B-40", 1448, limit_mbps=40.0, seed=seed),
        NoisyLimit("noisy-500B-60", 500, limit_mbps=60.0, seed=seed + 1),
        GeneratorShort("generator-1448B-40", 1448, generator_mbps=40.0, path_mbps=95.0),
    ]
