"""Run profiles: `quick` runs the whole matrix in a few minutes (CI), `full` uses the seeds'
durations and point lists. --repeat and --duration given on the command line override both.
The sweep families' points are in their definitions (hil.scenarios.families), per profile name;
`sweeps` holds the ones the command line overrode."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Profile:
    name: str
    repeat: int
    duration_s: float
    capacity_lengths: tuple[int, ...]
    capacity_trial_s: float
    ping_count: int
    flood_s: float
    flood_lengths: tuple[int, ...]
    stream_duration_s: float | None  # None: the stream profile's own duration (the thesis: 300 s)
    # the DUT window ladder: the DUT's received frames held this long by its firmware's delay line,
    # so every step is window-limited (16 x 1460 B per 20 ms = 9.3 Mbit/s) on any machine
    window_dut_delay_ms: int = 20
    # both directions at once through a DUT in the path (iperf 3 --bidir, the thesis's): besides
    # the timed TCP and UDP cases, TCP by data size (-n) and by write length (-l)
    bidir_amounts: tuple[str, ...] = ()
    bidir_lengths: tuple[int, ...] = ()
    # a sweep family's points given on the command line (axis field -> points), e.g. lengths: (64,)
    sweeps: dict[str, tuple[object, ...]] = field(default_factory=dict)


QUICK = Profile(
    name="quick",
    repeat=3,
    duration_s=3.0,
    capacity_lengths=(1448, 500),
    capacity_trial_s=1.5,
    ping_count=20,
    flood_s=2.0,
    flood_lengths=(64, 100, 500, 1448),
    stream_duration_s=10.0,
)

FULL = Profile(
    name="full",
    repeat=3,
    duration_s=10.0,
    capacity_lengths=(64, 100, 500, 1448),
    capacity_trial_s=5.0,
    ping_count=50,
    flood_s=60.0,  # thesis: ping -f -w 60
    flood_lengths=(64, 100, 500, 1448),
    stream_duration_s=None,
    bidir_amounts=("100M", "500M"),  # thesis: --bidir -n 100 MB / 500 MB
    bidir_lengths=(64, 100, 500, 1448),  # thesis: --bidir -l
)

PROFILES = {p.name: p for p in (QUICK, FULL)}
