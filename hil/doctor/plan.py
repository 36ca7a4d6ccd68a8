"""Which checks a DUT of the bench file gets, by what it is: one on the bench PC is brought up as a
run would (hil.doctor.bring_up); a real board is checked piece by piece (its probe, build, serial
port, the PC port, the peer, the secret, the tester, the labgrid place)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from hil.config.sections import DutBase
from hil.doctor import board_checks, host, lab, pc_port
from hil.doctor.bring_up import bring_up
from hil.doctor.finding import Finding
from hil.dut.bench_file import BenchConfig

Check = Callable[[], list[Finding]]


def host_checks(bench: BenchConfig) -> Iterator[Check]:
    local = any(d.local for d in bench.duts)
    yield lambda: [host.rights(local)]
    yield host.iperf_versions
    yield lambda: [host.tools(local)]
    yield lambda: [host.clock_source()]


def dut_checks(dut: DutBase, place: str | None, coordinator: str | None, paired: bool = False) -> Iterator[Check]:
    """`paired`: the DUT is brought up in its pair instead (hil.doctor.pair), as a run brings it up."""
    wifi = getattr(dut, "wifi", None)
    idf = getattr(dut, "idf", None)
    builds = sorted(idf.project_dir.glob("build*")) if idf is not None else []
    secret = board_checks.wifi_secret(wifi, builds)
    yield lambda: secret
    if dut.local:
        # without its secret the DUT cannot join its network: the one line above says so
        if not any(f.problem for f in secret) and not paired:
            yield lambda: bring_up(dut)
        return
    if place or dut.labgrid is not None:
        section = dut.labgrid
        yield lambda: [lab.labgrid_place(place or section.place, coordinator or (section and section.coordinator))]  # type: ignore[union-attr]
    yield lambda: board_checks.firmware(dut)
    yield lambda: board_checks.probe(dut)
    if dut.HAS_CONSOLE and not place and dut.labgrid is None:
        flashes = getattr(dut, "probe", None) is not None
        yield lambda: board_checks.console(dut, flashes)
    yield lambda: pc_port.pc_port(dut)
    if dut.peer is not None:
        yield lambda: [lab.peer_host(dut)]
    yield lambda: board_checks.tester(dut)
