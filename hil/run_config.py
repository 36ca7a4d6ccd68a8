"""A run's configuration from its command line, checked before any bench comes up: the bench
file and its DUT (with a labgrid place applied), the threshold profile against what the scenarios
record, the secrets and the firmware image, the run profile with its overrides, the --baseline
run. Every problem is one ConfigError (or ValueError) line naming the file, option and key."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from hil.config.errors import ConfigError, from_validation
from hil.config.sections import DutBase
from hil.config.thresholds import ThresholdProfile, load_thresholds, profile_path
from hil.console.dialects.registry import dialect_info
from hil.dut.bench_file import DEFAULT_BENCH_FILE, BenchConfig, load_bench
from hil.dut.fault_injection import parse_kill
from hil.dut.images import check_image_file
from hil.dut.planted_defects import parse_planted
from hil.paths import firmware_dir_problem
from hil.results.baseline import Baseline, load_baseline
from hil.run_options import swept_axes
from hil.scenarios.catalog import check_thresholds, with_family_defaults
from hil.scenarios.contract import BenchFacts
from hil.scenarios.profiles import PROFILES, Profile


@dataclass(frozen=True)
class RunConfig:
    bench: BenchConfig
    dut: DutBase
    thresholds: ThresholdProfile
    profile: Profile
    baseline: Baseline | None
    planted: dict[str, int] = dataclasses.field(default_factory=dict)  # --plant-defect (hil.dut.planted_defects)
    behind: DutBase | None = None  # the DUT behind the run's DUT (its peer.dut): it ends the traffic
    partner: DutBase | None = None  # the DUT beside it on its link (its partner:): the traffic's other end

    @property
    def duts_label(self) -> str:
        """The run's DUTs as the report's epic names them: the DUT, and the DUT behind it or beside it."""
        if self.behind is not None:
            return f"{self.dut.name} with {self.behind.name} behind it"
        if self.partner is not None:
            return f"{self.dut.name} and {self.partner.name} on one link"
        return self.dut.name


def load_run(opt: object) -> RunConfig:
    """The run's configuration from pytest's options (`config.option`); ConfigError or ValueError
    on the first problem."""
    if opt.repeat is not None and opt.repeat < 1:  # type: ignore[attr-defined]
        raise ValueError(f"--repeat must be at least 1 (got {opt.repeat})")  # type: ignore[attr-defined]
    for name in ("duration", "stream_duration"):
        value = getattr(opt, name)
        if value is not None and value <= 0:
            raise ValueError(f"--{name.replace('_', '-')} must be positive (got {value:g})")
    if opt.inject_dut_kill:  # type: ignore[attr-defined]
        parse_kill(opt.inject_dut_kill)  # type: ignore[attr-defined]
    planted = parse_planted(opt.plant_defect) if opt.plant_defect else {}  # type: ignore[attr-defined]
    if (problem := firmware_dir_problem()) is not None:
        raise ConfigError(problem)
    bench_path: Path = opt.bench or DEFAULT_BENCH_FILE  # type: ignore[attr-defined]
    bench = load_bench(bench_path)
    names = [d.name for d in bench.duts]
    wanted = opt.dut_name  # type: ignore[attr-defined]
    if wanted is not None and wanted not in names:
        raise ConfigError(f"{bench_path}: no DUT named {wanted!r} (bench has: {', '.join(names)})")
    dut = with_link_rate(with_labgrid(next(d for d in bench.duts if wanted in (None, d.name)), opt), opt)
    if planted and not dut.HAS_CONSOLE:
        raise ConfigError(f"--plant-defect: DUT {dut.name} (kind {dut.kind}) has no console to plant defects through")
    thresholds_path = opt.thresholds or profile_path(dut.thresholds)  # type: ignore[attr-defined]
    thresholds = load_thresholds(thresholds_path)
    check_thresholds(thresholds, thresholds_path)
    if thresholds.link_mbit is not None and dut.local and thresholds.link_mbit != dut.link.rate_mbit:
        raise ConfigError(
            f"{thresholds_path}: its limits are for a {thresholds.link_mbit:g} Mbit/s link, DUT {dut.name}'s runs at "
            f"{dut.link.rate_mbit:g} (--link-mbit or the bench file): give --thresholds for that rate"
        )
    if not opt.collectonly:  # type: ignore[attr-defined]  # secrets are needed to run, not to list the tests
        dut.check_secrets()
        if dut.firmware.image is not None and dut.IMAGE_FORMAT is not None:  # before a bench comes up
            check_image_file(dut.firmware.image, dut.IMAGE_FORMAT, f"{bench_path}: DUT {dut.name}: firmware.image")
    thresholds = with_family_defaults(thresholds)
    profile = profile_from_options(opt)
    baseline = _baseline(opt.baseline, dut.name, opt.profile, thresholds)  # type: ignore[attr-defined]
    behind_name = dut.peer.dut if dut.peer is not None else None
    behind = next((d for d in bench.duts if d.name == behind_name), None)
    partner = next((d for d in bench.duts if d.name == dut.partner), None)
    partner = partner_with_labgrid(partner, opt) if partner is not None else None
    check_places(opt, dut, partner)
    if opt.inject_dut_kill and (named := parse_kill(opt.inject_dut_kill)[2]) is not None:  # type: ignore[attr-defined]
        running = [d.name for d in (dut, behind, partner) if d is not None]
        if named not in running:
            raise ConfigError(f"--inject-dut-kill {opt.inject_dut_kill}: this run has no DUT {named!r} "  # type: ignore[attr-defined]
                              f"(it runs {', '.join(running)})")  # fmt: skip
    for other in (behind, partner):
        if other is not None and not opt.collectonly:  # type: ignore[attr-defined]
            other.check_secrets()
    return RunConfig(bench, dut, thresholds, profile, baseline, planted, behind, partner)


def profile_from_options(opt: object) -> Profile:
    """The run profile with the command line's overrides applied (each sweep family's axis option)."""
    profile = PROFILES[opt.profile]  # type: ignore[attr-defined]
    changes: dict[str, object] = {}
    if opt.stream_duration:  # type: ignore[attr-defined]
        changes["stream_duration_s"] = opt.stream_duration  # type: ignore[attr-defined]
    sweeps = {axis.field: axis.parse(text) for axis in swept_axes() if (text := getattr(opt, axis.field, None))}
    if sweeps:
        changes["sweeps"] = sweeps
    return dataclasses.replace(profile, **changes)  # type: ignore[arg-type]


def with_link_rate(dut: DutBase, opt: object) -> DutBase:
    """The DUT with --link-mbit applied: its virtual link shaped at that rate (one line for a real
    link, whose rate is the cable's)."""
    rate = opt.link_mbit  # type: ignore[attr-defined]
    if rate is None:
        return dut
    if not dut.local:
        raise ConfigError(f"--link-mbit: DUT {dut.name} is on a real link (kind {dut.kind}): its rate is the cable's")
    if not 0 < rate <= 100_000:
        raise ConfigError(f"--link-mbit must be above 0 and at most 100000 (got {rate:g})")
    link = dut.link.model_copy(update={"rate_mbit": rate})
    return dut.model_copy(update={"link": link})


def with_labgrid(dut: DutBase, opt: object) -> DutBase:
    """The DUT with --labgrid-place / --labgrid-wait applied, and its coordinator resolved (the
    bench file's, else $LG_COORDINATOR): one line when there is none."""
    place, wait = opt.labgrid_place, opt.labgrid_wait  # type: ignore[attr-defined]
    if wait is not None and wait < 0:
        raise ConfigError(f"--labgrid-wait must be 0 or more seconds (got {wait:g})")
    if place is None and dut.labgrid is None:
        return dut  # --labgrid-wait without any place of the run's: one line once the partner is known
    return _placed(dut, place, wait)


def check_places(opt: object, dut: DutBase, partner: DutBase | None) -> None:
    """The run's labgrid places: --labgrid-wait needs one; two DUTs never share one."""
    places = [(d.name, d.labgrid) for d in (dut, partner) if d is not None and d.labgrid is not None]
    if opt.labgrid_wait is not None and not places:  # type: ignore[attr-defined]
        raise ConfigError("--labgrid-wait is for a DUT reserved through a labgrid place (--labgrid-place)")
    where = {(section.coordinator, section.place) for _, section in places}
    if len(places) == 2 and len(where) == 1:
        raise ConfigError(
            f"DUTs {places[0][0]} and {places[1][0]} both name labgrid place {places[0][1].place}: "
            "each board is a place of its own"
        )


def partner_with_labgrid(partner: DutBase, opt: object) -> DutBase:
    """The partner with its own place's coordinator resolved (--labgrid-wait is the run's: it waits
    for every place the run holds); a partner without a place as it is."""
    return partner if partner.labgrid is None else _placed(partner, None, opt.labgrid_wait)  # type: ignore[attr-defined]


def _placed(dut: DutBase, place: str | None, wait: float | None) -> DutBase:
    section = dut.labgrid.model_dump() if dut.labgrid is not None else {}
    section |= {k: v for k, v in (("place", place), ("wait_s", wait)) if v is not None}
    section["coordinator"] = section.get("coordinator") or os.environ.get("LG_COORDINATOR")
    if not section["coordinator"]:
        raise ConfigError(
            f"DUT {dut.name}: labgrid place {section['place']}: no coordinator (labgrid.coordinator in the "
            "bench file, or LG_COORDINATOR=HOST:PORT)"
        )
    data = dut.model_dump(exclude_unset=True) | {"labgrid": section}
    try:
        return type(dut).model_validate(data)
    except ValidationError as exc:
        raise from_validation(Path(f"DUT {dut.name} with --labgrid-place"), exc) from None


def _baseline(path: Path | None, dut: str, profile: str, thresholds: ThresholdProfile) -> Baseline | None:
    """The --baseline run, checked against this run before any test: the same DUT and profile,
    and a threshold profile that says how much worse a case may be."""
    if path is None:
        return None
    base = load_baseline(path)
    if base.dut != dut:
        raise ConfigError(f"--baseline {path}: measured on DUT {base.dut!r}, this run tests {dut!r}")
    if base.profile and base.profile != profile:
        raise ConfigError(f"--baseline {path}: measured with --profile {base.profile}, this run uses {profile}")
    if not thresholds.regression:
        raise ConfigError(
            f"--baseline {path}: threshold profile {thresholds.profile!r} has no `regression:` section "
            "(per scenario or `default`: floor_pct, floor_abs, k_sd): the gate needs its tolerances"
        )
    return base


def bench_facts(dut: DutBase | None, profile: Profile, partner: DutBase | None = None) -> BenchFacts:
    """What the scenario contract needs of the bench to make its cases (no bench comes up); a
    SoftAP's attenuator is its station's, in front of the station (`partner`, a Wi-Fi pair)."""
    if dut is None:
        return BenchFacts(profile)
    window, mss = dut.ladders()
    dialect = dialect_info(dut.console.dialect) if dut.HAS_CONSOLE else None
    baud = dut.console.baud if dut.HAS_CONSOLE and not dut.LOCAL else None  # a local DUT's console is a pty
    duplex = dut.FULL_DUPLEX_BUILD if dut.build_configs == ["default"] else None
    wifi = getattr(dut, "wifi", None)
    station = getattr(partner, "wifi", None) if wifi is not None and wifi.mode == "softap" else wifi
    return BenchFacts(profile, dut.in_path, dialect, dut.kind, dut.local, tuple(window), tuple(mss), dut.builds(),
                      baud, dut.network.isolated, dut.tester is not None, duplex, tuple(dut.build_configs),
                      wifi is not None, station.attenuator if station is not None else None,
                      dut.peer.dut if dut.peer is not None else None, dut.partner, dut.name)  # fmt: skip
