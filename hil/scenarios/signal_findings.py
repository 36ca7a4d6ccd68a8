"""What a throughput-against-signal sweep found, from its steps alone (the rules of ESP-IDF's own
iperf CI, with their thresholds in one place): the best step, the range over which a stream keeps
50 % and 10 % of it, the bad points (a drop of more than 30 % against the previous, stronger
step, where the signal is still good and the stream still fast), where it fell to zero and whether
that was before the bench's expected range, and the floors a threshold profile sets at an RSSI
(`tcp-dut_tx@-70dBm: {min_mbps: 20}`: every step at -70 dBm or stronger carries 20 Mbit/s)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

# ESP-IDF's iperf CI (TestResult): a drop is a bad point only at RSSI >= -75 dBm and from >= 10 Mbit/s
BAD_DROP_PCT = 30.0
BAD_FROM_DBM = -75
BAD_MIN_MBPS = 10.0
ZERO_MBPS = 0.05  # a step carrying less has fallen to zero
ZERO_ABOVE_DBM = -88  # ESP-IDF's CI: a fall to zero at a stronger RSSI fails (where the bench gives no range)
KEEPS_PCT = (50.0, 10.0)
FLOOR_KEY = re.compile(r"^(?P<stream>(?:tcp|udp)-dut_(?:tx|rx))@(?P<rssi>-\d+)dBm$")


@dataclass(frozen=True)
class SweepStep:
    atten_db: float
    rssi_dbm: int | None  # None: the DUT had no association to report it from
    mbps: float
    associated: bool = True

    @property
    def zero(self) -> bool:
        return not self.associated or self.mbps < ZERO_MBPS


@dataclass
class Findings:
    best_mbps: float = 0.0
    best_at_db: float | None = None
    keeps: dict[float, tuple[float, int | None] | None] = field(default_factory=dict)  # % -> (dB, dBm) reached
    bad_points: list[str] = field(default_factory=list)
    bad_at_db: list[float] = field(default_factory=list)
    fell_to_zero_db: float | None = None
    fell_early: str | None = None
    floors_missed: list[str] = field(default_factory=list)
    largest_drop_pct: float | None = None  # the largest drop judged by the bad-point rule
    expected_range_db: float | None = None
    floors_met: list[str] = field(default_factory=list)

    def failures(self) -> list[str]:
        return [*self.bad_points, *([self.fell_early] if self.fell_early else []), *self.floors_missed]

    def criteria(self) -> str:
        """Each rule with what the sweep showed against it, for the case's title."""
        parts = []
        if self.largest_drop_pct is not None:
            missed = self.largest_drop_pct > BAD_DROP_PCT
            parts.append(f"largest drop {self.largest_drop_pct:.0f} % {'>' if missed else '<='} {BAD_DROP_PCT:g} %"
                         + (" MISSED" if missed else ""))  # fmt: skip
        zero = self.fell_to_zero_db
        shown = f"{zero:g} dB" if zero is not None else "never"
        if self.expected_range_db is not None:
            parts.append(f"fell to zero {shown} {'<' if self.fell_early else '>='} {self.expected_range_db:g} dB"
                         + (" MISSED" if self.fell_early else ""))  # fmt: skip
        else:
            parts.append(f"fell to zero {shown}, {'not ' if not self.fell_early else ''}above {ZERO_ABOVE_DBM} dBm"
                         + (" MISSED" if self.fell_early else ""))  # fmt: skip
        parts += self.floors_met + [f.removeprefix("BELOW THRESHOLD: ") + " MISSED" for f in self.floors_missed]
        return ", ".join(parts)

    def summary(self) -> str:
        keeps = "; ".join(
            f"keeps {pct:g} % of it to {at[0]:g} dB" + (f" ({at[1]} dBm)" if at[1] is not None else "")
            if at
            else f"below {pct:g} % of it from the first step"
            for pct, at in self.keeps.items()
        )
        zero = "never falls to zero"
        if self.fell_to_zero_db is not None:
            zero = f"falls to zero at {self.fell_to_zero_db:g} dB"
        bad = f"{len(self.bad_points)} bad point(s)" if self.bad_points else "no bad point"
        return f"best {self.best_mbps:.2f} Mbit/s at {self.best_at_db:g} dB; {keeps}; {zero}; {bad}"


def rssi_at(steps: Sequence[SweepStep], step: SweepStep) -> int | None:
    """A step's RSSI, or where the DUT could not tell it (no association) the last reported one
    moved by the attenuation added since (attenuation lowers the RSSI dB for dB)."""
    if step.rssi_dbm is not None:
        return step.rssi_dbm
    known = [s for s in steps if s.rssi_dbm is not None and s.atten_db <= step.atten_db]
    if not known:
        return None
    last = known[-1]
    assert last.rssi_dbm is not None
    return round(last.rssi_dbm - (step.atten_db - last.atten_db))


def analyse(
    stream: str,
    steps: Sequence[SweepStep],
    expected_range_db: float | None,
    floors: dict[int, float],
) -> Findings:
    """`steps` in sweep order (attenuation rising); `floors`: RSSI -> the least Mbit/s every step at
    that RSSI or stronger carries."""
    f = Findings()
    if not steps:
        return f
    f.expected_range_db = expected_range_db
    best = max(steps, key=lambda s: s.mbps)
    f.best_mbps = best.mbps
    f.best_at_db = next(s.atten_db for s in steps if s.mbps >= 0.99 * best.mbps)  # where the plateau starts
    for pct in KEEPS_PCT:
        reached = None
        for s in steps:
            if s.mbps < best.mbps * pct / 100:
                break
            reached = (s.atten_db, rssi_at(steps, s))
        f.keeps[pct] = reached
    for prev, s in itertools.pairwise(steps):
        if s.zero:
            continue
        rssi = rssi_at(steps, s)
        if rssi is None or rssi < BAD_FROM_DBM or prev.mbps < BAD_MIN_MBPS:
            continue
        drop = 100 * (1 - s.mbps / prev.mbps)
        f.largest_drop_pct = max(drop, f.largest_drop_pct or 0.0)
        if drop > BAD_DROP_PCT:
            f.bad_at_db.append(s.atten_db)
            f.bad_points.append(
                f"BAD POINT: {stream} at {s.atten_db:g} dB ({rssi} dBm): {s.mbps:.2f} Mbit/s, {drop:.0f} % below "
                f"{prev.mbps:.2f} at {prev.atten_db:g} dB (more than {BAD_DROP_PCT:g} % at {BAD_FROM_DBM} dBm or "
                f"stronger, from {BAD_MIN_MBPS:g} Mbit/s or more)"
            )
    zero = next((s for s in steps if s.zero), None)
    if zero is not None:
        f.fell_to_zero_db = zero.atten_db
        why = "no association" if not zero.associated else f"{zero.mbps:.3f} Mbit/s"
        rssi = rssi_at(steps, zero)
        if expected_range_db is not None and zero.atten_db < expected_range_db:
            f.fell_early = (
                f"FALL TO ZERO: {stream} at {zero.atten_db:g} dB ({why}), before the bench's expected range of "
                f"{expected_range_db:g} dB"
            )
        elif expected_range_db is None and (rssi is None or rssi > ZERO_ABOVE_DBM):
            # no range given: ESP-IDF's rule, nothing may fall to zero at a signal stronger than -88 dBm
            shown = f"{rssi} dBm" if rssi is not None else "no RSSI reported before it"
            f.fell_early = (
                f"FALL TO ZERO: {stream} at {zero.atten_db:g} dB ({why}, {shown}), above {ZERO_ABOVE_DBM} dBm"
            )
    for rssi_floor, mbps in sorted(floors.items(), reverse=True):
        covered = [(s, rssi_at(steps, s)) for s in steps]
        at_or_above = [(s, r) for s, r in covered if r is not None and r >= rssi_floor]
        if not at_or_above:
            f.floors_missed.append(
                f"BELOW THRESHOLD: {stream}@{rssi_floor}dBm: no step of the sweep reached {rssi_floor} dBm or stronger"
            )
            continue
        worst, worst_rssi = min(at_or_above, key=lambda sr: sr[0].mbps)
        if worst.mbps >= mbps:
            f.floors_met.append(f"{stream}@{rssi_floor}dBm {worst.mbps:.2f} >= {mbps:g} Mbit/s")
        else:
            f.floors_missed.append(
                f"BELOW THRESHOLD: {stream}@{rssi_floor}dBm: {worst.mbps:.2f} Mbit/s at {worst.atten_db:g} dB "
                f"({worst_rssi} dBm) < min {mbps:g} Mbit/s at {rssi_floor} dBm or stronger"
            )
    return f


def floors_for(stream: str, entries: dict[str, object]) -> dict[int, float]:
    """The at-RSSI floors of a stream from a profile's `signal` scenario entries (name -> Limits)."""
    out: dict[int, float] = {}
    for key, limits in entries.items():
        m = FLOOR_KEY.match(key)
        if m and m.group("stream") == stream:
            value = getattr(limits, "min_mbps", None)
            if value is not None:
                out[int(m.group("rssi"))] = float(value)
    return out
