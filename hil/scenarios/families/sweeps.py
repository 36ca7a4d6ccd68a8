"""The sweep families as data. A family is one definition: its groups (protocol x direction), the
axis it sweeps (which profile field holds the points, the command-line option that overrides
them, how a value reads in a case id and on a chart), how a point becomes traffic with its
theoretical value, and what else a point must satisfy. Everything else comes from it: the pytest
marker, the command-line override, one parametrized pytest case per point with the id
`<scenario>/<case>` (the threshold profile's keys), and the group's chart and table built from the
points measured in the run (hil.scenarios.run_point). Adding a sweep is a `register(Family(...))`
here; a new metric is a threshold entry only (limits are generic over names). Each family keeps
the scenario contract (hil.scenarios.contract): its cases for a bench, one run of a case.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from hil.checks import BenchFault
from hil.directions import direction_name, direction_says
from hil.results.recorder import CaseRecord
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.metrics import DIRECTION, IPERF3, SIZE, THROUGHPUT, UDP, ScenarioShape
from hil.scenarios.offered import BASELINE_UDP_LEN, BASELINE_UDP_OF_LINK, UDP_OFFER_OF_THEORY
from hil.scenarios.profiles import Profile
from hil.theory import tcp_goodput_mbps, udp_goodput_mbps
from hil.tools.sizes import parse_iperf_size
from hil.traffic.roles import TrafficSpec

if TYPE_CHECKING:
    from hil.session import HilContext

Proto = Literal["tcp", "udp"]
Direction = Literal["dut_rx", "dut_tx"]
DIRECTIONS: tuple[Direction, ...] = ("dut_rx", "dut_tx")
FULL_SEGMENT = 1460  # the MSS of a full Ethernet frame


@dataclass(frozen=True)
class Group:
    proto: Proto
    direction: Direction  # the traffic's role (the DUT's view); SweepPoint.direction names it


@dataclass(frozen=True)
class Axis:
    """What a family sweeps: the profile field with the points and the option overriding them."""

    field: str  # the axis's name, e.g. "lengths" (Profile.sweeps key of a command-line override)
    points: dict[str, tuple[object, ...]]  # the points per run profile ("quick", "full")
    option: str  # command-line override, e.g. --lengths 64,1448
    help: str
    parse: Callable[[str], tuple[object, ...]]  # the option's text -> points; ValueError names the problem
    case: Callable[[object], str]  # a point's part of the case id, e.g. 500 -> "l500"
    x: Callable[[object], float]  # the point on the chart's x axis
    label: str  # the chart's x-axis label
    logx: bool = False


@dataclass(frozen=True)
class PointEnv:
    """What a point's traffic depends on besides its value: the link, the tests' duration, and the
    step of the UDP rates each direction's sender can be asked (hil.session.HilContext.rate_step)."""

    link_mbit: float
    duration_s: float
    rate_steps: Mapping[str, float | None] = field(default_factory=dict)

    def offer(self, rate_mbps: float, direction: str) -> float:
        """The UDP rate to offer for `rate_mbps`: the next one up the sender can be asked (a
        console whose iperf takes whole Mbit/s offers 18 for 17.23), so that the offered rate in
        the record is what the sender was told, and never below the point's."""
        step = self.rate_steps.get(direction)
        if not step:
            return rate_mbps
        return round(math.ceil(rate_mbps / step - 1e-9) * step, 3)

    def offer_params(self, rate_mbps: float, direction: str) -> dict[str, object]:
        """The case's parameters for its offered rate (and the step it was rounded up to)."""
        step = self.rate_steps.get(direction)
        return {"offered rate (Mbit/s)": rate_mbps, **({"sender's rate step (Mbit/s)": step} if step else {})}


@dataclass(frozen=True)
class Traffic:
    spec: TrafficSpec
    theory_mbps: float | None
    params: dict[str, object] = field(default_factory=dict)  # shown with the case (e.g. the offered rate)


@dataclass(frozen=True)
class Family:
    name: str  # what the report calls it
    marker: str
    marker_doc: str
    groups: tuple[Group, ...]
    scenario: Callable[[Group], str]  # the threshold profile's scenario key of a group
    traffic: Callable[[Group, object, PointEnv], Traffic]
    shapes: tuple[ScenarioShape, ...]  # its scenarios' case ids and metrics (the threshold catalogue)
    axis: Axis | None = None  # None: one point per group
    # a fault the recorded numbers show besides the thresholds (an AssertionError for the DUT's,
    # a BenchFault for the bench's), returned, not raised: the threshold check still runs
    verify: Callable[[CaseRecord, object], AssertionError | None] | None = None
    table: Callable[[list[CaseRecord]], str] | None = None  # the group's table (default: the sweep table)
    # what a group needs of the DUT's console when the DUT ends the traffic, beyond its iperf
    # (hil.console.dialects.capabilities.FEATURES): a dialect without it skips the group's points
    dut_needs: Callable[[Group], tuple[str, ...]] = lambda g: ()

    def cases(self, bench: BenchFacts) -> list[Case]:
        """One case per point, group by group, with what its group needs of the DUT's console."""
        pair = (bench.name, bench.partner) if bench.partner is not None else None
        points = sweep_points(bench.profile, (self,), in_path=bench.in_path, pair=pair)
        return [Case(self, p.id, p, needs=frozenset(self.dut_needs(p.group))) for p in points]

    def run(self, hil: HilContext, case: Case) -> None:
        from hil.scenarios.run_point import run_point

        run_point(hil, case.point)  # type: ignore[arg-type]


@dataclass(frozen=True)
class SweepPoint:
    family: Family
    group: Group
    value: object | None  # None for a family without an axis
    last_of_group: bool  # the group's chart and table are attached to its last point
    in_path: bool = False  # the DUT forwards: directions are named uplink / downlink (hil.directions)
    pair: tuple[str, str] | None = None  # DUT to DUT: (the DUT, its partner), whose names say the directions

    @property
    def scenario(self) -> str:
        return self.family.scenario(self.group)

    @property
    def direction(self) -> str:
        """The group's direction as the case ids name it."""
        return direction_name(self.group.direction, self.in_path)

    @property
    def label(self) -> str:
        """The group as titles and charts name it, e.g. `TCP uplink (peer -> PC)`."""
        says = direction_says(self.group.direction, self.in_path, self.pair)
        return f"{self.group.proto.upper()} {self.direction} ({says})"

    @property
    def case(self) -> str:
        if self.family.axis is None:
            return f"{self.group.proto}-{self.direction}"
        return f"{self.direction}-{self.family.axis.case(self.value)}"

    @property
    def id(self) -> str:
        return f"{self.scenario}/{self.case}"

    def __repr__(self) -> str:  # what pytest and Allure show as the case's parameter
        return self.id

    @property
    def group_prefix(self) -> str:
        """The case ids of the point's group start with this."""
        return self.case if self.family.axis is None else f"{self.direction}-"


def _no_repeats(option: str, points: tuple[object, ...], values: tuple[object, ...], text: str) -> tuple[object, ...]:
    """The points, unless one is given twice (by its value: 32K and 32768 are one point): each
    case would run twice under one id."""
    seen: dict[object, object] = {}
    for point, value in zip(points, values, strict=True):
        if value in seen:
            raise ValueError(f"{option}: {point} is given twice (got {text!r}): each point runs once")
        seen[value] = point
    return points


def int_list(option: str, lo: int, hi: int) -> Callable[[str], tuple[object, ...]]:
    def parse(text: str) -> tuple[object, ...]:
        try:
            values = tuple(int(v) for v in text.split(","))
        except ValueError:
            raise ValueError(f"{option} takes comma-separated integers (got {text!r})") from None
        if not values or any(not lo <= v <= hi for v in values):
            raise ValueError(f"{option} values must lie in {lo}..{hi} (got {text!r})")
        return _no_repeats(option, values, values, text)

    return parse


def size_list(option: str, example: str) -> Callable[[str], tuple[object, ...]]:
    def parse(text: str) -> tuple[object, ...]:
        sizes = tuple(s.strip() for s in text.split(","))
        for s in sizes:
            try:
                if parse_iperf_size(s) <= 0:
                    raise ValueError
            except ValueError:
                raise ValueError(f"{option}: bad size {s!r} (e.g. {example})") from None
        return _no_repeats(option, sizes, tuple(parse_iperf_size(s) for s in sizes), text)

    return parse


def _as_float(value: object) -> float:
    return float(str(value))


def _size_x(value: object) -> float:
    return float(parse_iperf_size(str(value)))


def _full_segments(env: PointEnv) -> float:
    return tcp_goodput_mbps(env.link_mbit, FULL_SEGMENT)


# --- baseline (seed 000, 5.1.1; ESP-IDF's own iperf test): TCP and UDP, each direction --------


def _baseline(g: Group, _: object, env: PointEnv) -> Traffic:
    if g.proto == "tcp":
        return Traffic(TrafficSpec("tcp", g.direction, env.duration_s), _full_segments(env))
    rate = env.offer(round(env.link_mbit * BASELINE_UDP_OF_LINK, 3), g.direction)
    spec = TrafficSpec("udp", g.direction, env.duration_s, length=BASELINE_UDP_LEN, rate_mbps=rate)
    return Traffic(spec, udp_goodput_mbps(env.link_mbit, BASELINE_UDP_LEN), env.offer_params(rate, g.direction))


BASELINE = Family(
    name="baseline",
    marker="baseline",
    marker_doc="TCP/UDP x DUT transmits/receives",
    groups=tuple(Group(p, d) for p in ("tcp", "udp") for d in ("dut_tx", "dut_rx")),
    scenario=lambda g: "baseline",
    traffic=_baseline,
    shapes=(ScenarioShape("baseline", rf"(?:tcp|udp)-{DIRECTION}", THROUGHPUT | UDP | IPERF3, "tcp-dut_tx"),),
)


# --- packet-length sweep (thesis tables 8 and 10) ---------------------------------------------
def _length(g: Group, length: object, env: PointEnv) -> Traffic:
    n = int(length)  # type: ignore[call-overload]
    if g.proto == "tcp":  # writes of any size fill full segments
        return Traffic(TrafficSpec("tcp", g.direction, env.duration_s, length=n), _full_segments(env))
    theory = udp_goodput_mbps(env.link_mbit, n)
    rate = env.offer(round(theory * UDP_OFFER_OF_THEORY, 3), g.direction)
    spec = TrafficSpec("udp", g.direction, env.duration_s, length=n, rate_mbps=rate)
    return Traffic(spec, theory, env.offer_params(rate, g.direction))


LENGTH = Family(
    name="packet-length sweep",
    marker="length",
    marker_doc="packet-length sweeps, TCP and UDP",
    groups=tuple(Group(p, d) for p in ("tcp", "udp") for d in DIRECTIONS),
    scenario=lambda g: f"length_{g.proto}",
    traffic=_length,
    shapes=(
        ScenarioShape("length_tcp", rf"{DIRECTION}-l\d+", THROUGHPUT | IPERF3, "dut_rx-l1448"),
        ScenarioShape("length_udp", rf"{DIRECTION}-l\d+", THROUGHPUT | UDP | IPERF3, "dut_rx-l1448"),
    ),
    axis=Axis(
        field="lengths",
        points={"quick": (64, 100, 500, 1448), "full": (64, 100, 500, 1448)},  # thesis tables 8 and 10
        option="--lengths",
        help="packet lengths to sweep, e.g. 64,1448",
        parse=int_list("--lengths", 28, 1472),
        case=lambda v: f"l{v}",
        x=_as_float,
        label="length (bytes)",
    ),
)


# --- TCP window sweep, PC side (seed 000, 5.1.2) ---------------------------------------------
def _pc_window(g: Group, window: object, env: PointEnv) -> Traffic:
    spec = TrafficSpec("tcp", g.direction, env.duration_s, pc_window=str(window))
    return Traffic(spec, _full_segments(env), {"PC -w": window})


WINDOW_PC = Family(
    name="TCP window sweep, PC-side -w",
    marker="window",
    marker_doc="TCP window sweeps (PC -w, DUT build configs)",
    groups=tuple(Group("tcp", d) for d in DIRECTIONS),
    scenario=lambda g: "window_pc",
    traffic=_pc_window,
    shapes=(ScenarioShape("window_pc", rf"{DIRECTION}-w{SIZE}", THROUGHPUT | IPERF3, "dut_rx-w32K"),),
    axis=Axis(
        field="pc_windows",
        points={"quick": ("8K", "32K", "128K"), "full": ("4K", "8K", "16K", "32K", "64K", "128K")},
        option="--pc-windows",
        help="PC-side windows to sweep, e.g. 4K,16K,128K",
        parse=size_list("--pc-windows", "4K, 64000, 128K"),
        case=lambda v: f"w{v}",
        x=_size_x,
        label="PC socket buffer (bytes)",
        logx=True,
    ),
)


# --- MSS sweep, PC side (seed 000, 5.1.3): requested and observed MSS ------------------------
def _pc_mss(g: Group, mss: object, env: PointEnv) -> Traffic:
    n = int(mss)  # type: ignore[call-overload]
    spec = TrafficSpec("tcp", g.direction, env.duration_s, pc_mss=n, observe_mss=True)
    return Traffic(spec, tcp_goodput_mbps(env.link_mbit, min(n, FULL_SEGMENT)), {"PC -M": n})


def _mss_observed(rec: CaseRecord, _: object) -> AssertionError | None:
    if rec.extra.get("observed_mss") is None:
        return BenchFault(f"the connection's MSS could not be observed for {rec.case}")
    return None


def mss_table(records: list[CaseRecord]) -> str:
    """Requested and observed MSS (the kernel's `ss`) beside what the wire showed: both SYNs' MSS
    options, the largest payload each way, and why the data segments have their size."""
    lines = [f"{'requested':>9s} {'ss':>6s} {'SYN PC':>7s} {'SYN far':>7s} {'max PC>':>8s} {'max >PC':>8s} "
             f"{'median':>9s} {'theory':>8s} {'eff%':>6s}  case"]  # fmt: skip
    whys = []
    for r in records:
        obs = r.extra.get("observed_mss")
        eff = f"{r.efficiency_pct:6.1f}" if r.efficiency_pct else f"{'-':>6s}"
        found = r.extra.get("wire_mss")
        w: dict[str, object] = found if isinstance(found, dict) else {}
        keys = ("syn_mss_pc", "syn_mss_far", "largest_payload_pc_to_far", "largest_payload_far_to_pc")
        wire = [w.get(k, "-") for k in keys]
        lines.append(
            f"{r.extra.get('requested_mss')!s:>9s} {obs!s:>6s} {wire[0]!s:>7s} {wire[1]!s:>7s} {wire[2]!s:>8s} "
            f"{wire[3]!s:>8s} {r.median:9.2f} {r.theory or 0:8.2f} {eff}  {r.case}"
        )
        if w.get("why"):
            whys.append(f"{r.case}: {w['why']}")
    if not any(r.extra.get("wire_mss") for r in records):
        whys.append("no capture (--wire-capture off, or the bench cannot capture): the SYNs were not read")
    return "\n".join([*lines, "", *whys])


MSS_PC = Family(
    name="MSS sweep, PC-side -M (requested vs observed MSS)",
    marker="mss",
    marker_doc="MSS sweeps (PC -M, DUT build configs), observed MSS",
    groups=tuple(Group("tcp", d) for d in DIRECTIONS),
    scenario=lambda g: "mss_pc",
    traffic=_pc_mss,
    shapes=(ScenarioShape("mss_pc", rf"{DIRECTION}-M\d+", THROUGHPUT | IPERF3, "dut_rx-M536"),),
    axis=Axis(
        field="pc_mss",
        points={"quick": (536, 960, 1460), "full": (160, 360, 560, 760, 960, 1160, 1360, 1460)},  # seed 000, + 1460
        option="--pc-mss",
        help="PC-side MSS values to sweep, e.g. 160,536,1460",
        parse=int_list("--pc-mss", 88, 1460),
        case=lambda v: f"M{v}",
        x=_as_float,
        label="requested MSS (bytes)",
    ),
    verify=_mss_observed,
    table=mss_table,
)


# --- data-size transfers (thesis: iperf -n 100 MB and 500 MB) --------------------------------
IPERF2_HEADER_SLACK = 24  # iperf 2 does not count the first message's header word as data


def _datasize(g: Group, size: object, env: PointEnv) -> Traffic:
    theory = _full_segments(env)
    expected_s = parse_iperf_size(str(size)) * 8 / (theory * 1e6)
    return Traffic(TrafficSpec("tcp", g.direction, expected_s, amount=str(size)), theory, {"iperf -n": size})


def _all_bytes(rec: CaseRecord, size: object) -> AssertionError | None:
    want = parse_iperf_size(str(size))
    got = list(rec.extra.get("bytes", []))  # type: ignore[call-overload]
    if any(b is None for b in got):
        return AssertionError(f"{rec.case}: the receiver reported no byte count, the transfer cannot be checked")
    short = [b for b in got if b < want - IPERF2_HEADER_SLACK]
    return AssertionError(f"DUT fault: {rec.case} transferred {short} of {size} bytes") if short else None


DATASIZE = Family(
    name="data-size transfers (-n)",
    marker="datasize",
    marker_doc="fixed-size transfers (-n)",
    groups=tuple(Group("tcp", d) for d in DIRECTIONS),
    scenario=lambda g: "datasize",
    traffic=_datasize,
    shapes=(ScenarioShape("datasize", rf"{DIRECTION}-n{SIZE}", THROUGHPUT | IPERF3, "dut_rx-n10M"),),
    dut_needs=lambda g: ("client_amount",) if g.direction == "dut_tx" else (),  # the DUT's client sends -n
    axis=Axis(
        field="data_sizes",
        points={"quick": ("10M",), "full": ("100M", "500M")},  # thesis: 100 MB and 500 MB
        option="--data-sizes",
        help="transfer sizes, e.g. 10M,100M",
        parse=size_list("--data-sizes", "10M, 500M"),
        case=lambda v: f"n{v}",
        x=_size_x,
        label="bytes transferred",
        logx=True,
    ),
    verify=_all_bytes,
)


# --- UDP offered load: delivered vs offered at rising load (RFC 2544's throughput curve) --------
# Added as the architecture's worked example (docs/architecture.md): this definition and the
# threshold profiles' `load_udp` entries, nothing else.
LOAD_UDP_LEN = 1470


def _offered_load(g: Group, pct: object, env: PointEnv) -> Traffic:
    rate = env.offer(round(udp_goodput_mbps(env.link_mbit, LOAD_UDP_LEN) * float(str(pct)) / 100, 3), g.direction)
    spec = TrafficSpec("udp", g.direction, env.duration_s, length=LOAD_UDP_LEN, rate_mbps=rate)
    return Traffic(spec, rate, env.offer_params(rate, g.direction))  # what it should deliver: all it was offered


LOAD_UDP = Family(
    name="UDP offered load (delivered vs offered)",
    marker="load",
    marker_doc="UDP at rising offered load: delivered vs offered, loss",
    groups=tuple(Group("udp", d) for d in DIRECTIONS),
    scenario=lambda g: "load_udp",
    traffic=_offered_load,
    shapes=(ScenarioShape("load_udp", rf"{DIRECTION}-load\d+", THROUGHPUT | UDP | IPERF3, "dut_rx-load90"),),
    axis=Axis(
        field="udp_loads",
        points={"quick": (50, 90), "full": (10, 25, 50, 75, 90)},
        option="--udp-loads",
        help="UDP offered loads in % of the theoretical goodput of 1470-byte datagrams, e.g. 25,50,90",
        parse=int_list("--udp-loads", 1, 100),
        case=lambda v: f"load{v}",
        x=_as_float,
        label="offered load (% of the theoretical goodput)",
    ),
)

FAMILIES: tuple[Family, ...] = (BASELINE, WINDOW_PC, MSS_PC, LENGTH, DATASIZE, LOAD_UDP)
for _family in FAMILIES:  # in this order in a run
    register(_family)


def axis_points(axis: Axis, profile: Profile) -> tuple[object, ...]:
    """An axis's points in a run: the command line's, else the definition's for the profile."""
    return profile.sweeps.get(axis.field) or axis.points[profile.points_name]


def sweep_points(
    profile: Profile, families: Iterable[Family] = FAMILIES, in_path: bool = False, pair: tuple[str, str] | None = None
) -> list[SweepPoint]:
    """Every point of every family under a profile, in run order (group by group); `in_path`:
    the DUT forwards (directions named uplink / downlink); `pair`: DUT to DUT, (the DUT, its
    partner) whose names say the directions."""
    out: list[SweepPoint] = []
    for fam in families:
        for g in fam.groups:
            values = (None,) if fam.axis is None else axis_points(fam.axis, profile)
            out += [SweepPoint(fam, g, v, i == len(values) - 1, in_path, pair) for i, v in enumerate(values)]
    return out
