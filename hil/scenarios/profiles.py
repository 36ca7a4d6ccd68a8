"""Run profiles: `quick` runs the whole matrix in a few minutes (CI), `full` uses the seeds'
durations and point lists, `rfc2544` is `full` with the capacity search's trials at RFC 2544's
60 s. --repeat and --duration given on the command line override both.
The sweep families' points are in their definitions (hil.scenarios.families), per profile name;
`sweeps` holds the ones the command line overrode."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hil.scenarios.mlr_goals import SearchGoal

DEFAULT_PDR_LOSS_PCT = 0.5  # RFC 9971's partial-drop rate as FD.io CSIT runs it


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
    # the NDR/PDR search's goals (RFC 9971): final trials of capacity_trial_s, this duration sum
    # (None: one final trial), exceed ratio and width (relative to the upper bound)
    capacity_duration_sum_s: float | None = None
    capacity_exceed_ratio: float = 0.0
    capacity_width: float = 0.005
    # the profile whose sweep points, packet counts and robustness counts this one takes ("": its own)
    points_of: str = ""

    @property
    def points_name(self) -> str:
        return self.points_of or self.name

    def capacity_goals(self, pdr_loss_pct: float = DEFAULT_PDR_LOSS_PCT) -> tuple[SearchGoal, SearchGoal]:
        """The no-drop rate's goal and the partial-drop rate's at `pdr_loss_pct`."""
        common = {
            "final_trial_s": self.capacity_trial_s,
            "duration_sum_s": self.capacity_duration_sum_s or self.capacity_trial_s,
            "exceed_ratio": self.capacity_exceed_ratio,
            "width": self.capacity_width,
        }
        return SearchGoal("NDR", 0.0, **common), SearchGoal("PDR", pdr_loss_pct / 100, **common)  # type: ignore[arg-type]


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

# RFC 2544's throughput trials (60 s each, RFC 9971's goal 60f60d0l0e) and otherwise the full
# profile: the capacity search at the RFC's durations
RFC2544 = replace(FULL, name="rfc2544", capacity_trial_s=60.0, points_of="full")

PROFILES = {p.name: p for p in (QUICK, FULL, RFC2544)}
