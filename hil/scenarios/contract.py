"""The one contract every scenario family keeps, and the registry the families join.

A family declares its cases for a bench (`Family.cases`: ids `<scenario>/<case>`, what each case
needs of the DUT's console and of the topology, whether it flashes its own builds) and runs one
case into records (`Family.run`: measure -> record -> check, hil.scenarios.sweep). It also says
what its scenarios record (`shapes`: the threshold catalogue, hil.scenarios.catalog), its default
limits (a bench's threshold file only overrides them), its pytest marker and the command-line
axis options that override its points. A family registers itself where it is defined
(`@register` or `register(...)` in a module of hil/scenarios/families/); `families()` finds every
module there, so a new family is one file: no list to extend.

Which cases a bench cannot run is the contract's too (`why_not`): a case is collected and
skipped with the reason, never silently left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar, runtime_checkable

from hil.plugins import import_all
from hil.scenarios.profiles import Profile

if TYPE_CHECKING:
    from hil.config.attenuator import AttenuatorConfig
    from hil.console.dialects.capabilities import DialectInfo
    from hil.scenarios.metrics import ScenarioShape
    from hil.session import HilContext

Topology = Literal["any", "endpoint", "in_path"]

# why a case whose traffic ends on the DUT's console does not run against a DUT in the path
IN_PATH_SKIP = (
    "the DUT forwards traffic between the PC and the peer: its own TCP_WND/TCP_MSS builds take no part in it "
    "(endpoint DUTs only)"
)
IN_PATH_ONLY = "the reconnection case takes the link beside a DUT in the path down and up (role in_path)"

# the families whose traffic runs between any two endpoints through the run's far end and its near
# end (hil.traffic.roles.run_traffic): on a DUT-to-DUT bench the other DUT's console is the near end
PAIR_FAMILIES = frozenset({
    "baseline", "packet-length sweep", "data-size transfers (-n)", "UDP offered load (delivered vs offered)",
    "loss-free UDP capacity search", "serial throughput (a file through the console)", "ping latency",
    "bidirectional", "flood ping", "latency under load", "throughput against signal",
    "stress: bursty multi-stream UDP",
})  # fmt: skip


def pair_skip(partner: str) -> str:
    """Why a family does not run on a DUT-to-DUT bench: the PC is no end of its traffic."""
    return (
        f"a DUT-to-DUT bench: the traffic runs between the DUT and DUT {partner} (both consoles), and this "
        "family needs the PC as one end (its own generators, its socket options or raw frames)"
    )


@dataclass(frozen=True)
class BenchFacts:
    """What the contract knows of the bench when it makes the cases (before any bench comes up):
    the run profile and the bench file's DUT."""

    profile: Profile
    in_path: bool = False
    dialect: DialectInfo | None = None  # the DUT's console dialect (None: no console)
    kind: str = ""  # the DUT kind (a name for messages)
    local: bool = True  # the DUT runs on the bench PC: its links are the bench's own (namespaces)
    window_ladder: tuple[tuple[str, int], ...] = ()  # (build configuration, TCP_WND in segments)
    mss_builds: tuple[tuple[str, int], ...] = ()  # (build configuration, TCP_MSS)
    # every build configuration the DUT's kind can flash, with its build system's stack settings
    builds: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    # the baud rate of the DUT's console: a board's serial port; None: a pseudo-terminal of the bench
    # (the virtual DUT's, QEMU's UART), which has no line rate, or no console
    console_baud: int | None = None
    # the bench file declares the DUT's network isolated (network.isolated): hostile frames may be sent on it
    isolated: bool = False
    # a real bench's frame tester: the PC's two NICs around the DUT, calibrated (the bench file's `tester:`)
    two_nic_tester: bool = False
    # the build the bidirectional cases flash (the kind's FULL_DUPLEX_BUILD), None: the bench file's
    full_duplex_build: str | None = None
    # the bench file's build configurations (firmware.config, or the kind's several)
    own_configs: tuple[str, ...] = ()
    wifi: bool = False  # the DUT is a Wi-Fi station (a `wifi:` section)
    attenuator: AttenuatorConfig | None = None  # its RF attenuator (wifi.attenuator), None: none on the bench
    behind: str | None = None  # the DUT behind the DUT in the path (peer.dut): it ends the traffic, no peer host
    partner: str | None = None  # the DUT beside the DUT on its link (partner:): the traffic's other end, not the PC
    name: str = ""  # the DUT's name (the bench file's)


@dataclass(frozen=True)
class Case:
    """One case of a family: its id (`<scenario>/<case>`, as the threshold profile keys it; the
    stress profiles' are their names, whose scenarios are `stress-<name>`) and what the family
    needs to run it (`point`)."""

    family: Family
    id: str
    point: object = None
    needs: frozenset[str] = frozenset()  # what the case needs of the DUT's console beyond its iperf
    topology: Topology = "any"  # endpoint: traffic ends on the DUT; in_path: the DUT forwards
    own_builds: bool = False  # flashes its own build configurations (not run once per config)
    skip: str | None = None  # the family's own reason it cannot run here (e.g. no builds declared)

    def __repr__(self) -> str:  # what pytest and Allure show as the case's parameter
        return self.id

    def run(self, hil: HilContext) -> None:
        self.family.run(hil, self)


@runtime_checkable
class Family(Protocol):
    """A scenario family as the suite runs it."""

    name: str  # what the report calls it (the Allure feature)
    marker: str  # the pytest marker selecting its cases (-m <marker>)
    marker_doc: str
    shapes: tuple[ScenarioShape, ...]  # its scenarios' case ids and metrics (the threshold catalogue)

    def cases(self, bench: BenchFacts) -> list[Case]: ...

    def run(self, hil: HilContext, case: Case) -> None: ...


_FAMILIES: list[Family] = []
_DISCOVERED = False


F = TypeVar("F")


def register(family: F) -> F:
    """Adds a family to the registry (a decorator on a class registers an instance of it)."""
    instance: Family = family() if isinstance(family, type) else family  # type: ignore[assignment]
    if any(f.name == instance.name for f in _FAMILIES):
        raise ValueError(f"scenario family {instance.name!r} registered twice")
    _FAMILIES.append(instance)
    return family


def families() -> tuple[Family, ...]:
    """Every registered family, in the order of their modules in hil/scenarios/families/."""
    global _DISCOVERED
    if not _DISCOVERED:
        import_all("hil.scenarios.families")
        _DISCOVERED = True
        # module order, whichever module imported which first; registration order within a module
        order = {id(f): i for i, f in enumerate(_FAMILIES)}
        _FAMILIES.sort(key=lambda f: (type(f).__module__, order[id(f)]))
    return tuple(_FAMILIES)


def default_limits() -> dict[str, dict[str, dict[str, float]]]:
    """Every family's default limits (scenario -> case -> bounds)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for fam in families():
        for scenario, cases in getattr(fam, "default_limits", {}).items():
            out.setdefault(scenario, {}).update({case: dict(bounds) for case, bounds in cases.items()})
    return out


def record_keys(case: Case, bench: BenchFacts) -> list[tuple[str, str]]:
    """The (scenario, case) threshold keys a case records under: its id's, unless its family
    says otherwise (`Family.record_keys`: e.g. one record per direction of a bidirectional case)."""
    own = getattr(case.family, "record_keys", None)
    if own is not None:
        return list(own(case, bench))
    scenario, _, key = case.id.partition("/")
    return [(scenario, key)]


BUILDS = frozenset({"builds"})  # a case that flashes build configurations of its own


def no_builds_case(family: Family, scenario: str, bench: BenchFacts, what: str) -> Case:
    """The one case of a build ladder a bench declares no builds for, skipped saying why: its
    console cannot flash builds (the dialect's reason), else its kind declares none of `what`."""
    why = (bench.dialect.not_applicable(BUILDS) if bench.dialect is not None else None) or (
        f"DUT kind {bench.kind!r} declares no {what} builds to flash"
    )
    return Case(family, scenario, skip=why, topology="endpoint", own_builds=True, needs=BUILDS)


def why_not(case: Case, bench: BenchFacts) -> str | None:
    """Why the bench cannot run a case (the skip reason), None when it can."""
    if case.skip is not None:
        return case.skip
    if case.topology == "in_path" and not bench.in_path:
        return IN_PATH_ONLY
    if case.topology == "endpoint" and bench.in_path:
        return IN_PATH_SKIP
    if bench.partner is not None and case.family.name not in PAIR_FAMILIES:
        return pair_skip(bench.partner)
    if not bench.in_path and bench.dialect is not None:
        return bench.dialect.not_applicable(case.needs)
    return None


@dataclass(frozen=True)
class Collected:
    case: Case
    skip: str | None  # the contract's reason the bench cannot run it
    markers: tuple[str, ...] = field(default=())
    skip_group: str | None = None  # where the report groups a skipped case (its feature)


def skip_group(case: Case, bench: BenchFacts, reason: str) -> str:
    """The report's group of a case the bench cannot run: why, rather than which family."""
    if reason == IN_PATH_SKIP:
        return "not run with the DUT in the path"
    if bench.partner is not None and reason == pair_skip(bench.partner):
        return "not run DUT to DUT"
    if bench.dialect is not None and reason == bench.dialect.not_applicable(case.needs):
        return f"not applicable to {bench.dialect.name}"
    return case.family.name


def collect(bench: BenchFacts) -> list[Collected]:
    """Every case of every family on a bench, in run order, with its skip reason and markers."""
    out: list[Collected] = []
    for fam in families():
        for case in fam.cases(bench):
            markers = [fam.marker]
            if case.topology == "endpoint":
                markers.append("dut_endpoint")
            if case.own_builds:
                markers.append("own_builds")
            reason = why_not(case, bench)
            group = skip_group(case, bench, reason) if reason is not None else None
            out.append(Collected(case, reason, tuple(markers), group))
    return out
