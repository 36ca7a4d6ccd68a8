"""Which checks a DUT of the bench file gets, by what it is: one on the bench PC is brought up as a
run would (hil.doctor.bring_up); a real board is checked piece by piece (its probe, build, serial
port, the PC port, the peer, the secret, the tester, the labgrid place)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from hil.config.sections import DutBase
from hil.doctor import board_checks, host, pc_port
from hil.doctor.bring_up import bring_up
from hil.doctor.finding import Finding, ok, problem
from hil.dut.bench_file import BenchConfig
from hil.errors import BenchError
from hil.plumbing.hardware_link import HardwareLink
from hil.plumbing.labgrid_place import PlaceLock
from hil.plumbing.peer_host import real_peer

Check = Callable[[], list[Finding]]


def host_checks(bench: BenchConfig) -> Iterator[Check]:
    local = any(d.local for d in bench.duts)
    yield lambda: [host.rights(local)]
    yield host.iperf_versions
    yield lambda: [host.tools(local)]
    yield lambda: [host.clock_source()]


def dut_checks(dut: DutBase, place: str | None, coordinator: str | None) -> Iterator[Check]:
    wifi = getattr(dut, "wifi", None)
    idf = getattr(dut, "idf", None)
    builds = sorted(idf.project_dir.glob("build*")) if idf is not None else []
    secret = board_checks.wifi_secret(wifi, builds)
    yield lambda: secret
    if dut.local:
        # without its secret the DUT cannot join its network: the one line above says so
        if not any(f.problem for f in secret):
            yield lambda: bring_up(dut)
        return
    if place or dut.labgrid is not None:
        yield lambda: [_labgrid(place or dut.labgrid.place, coordinator or (dut.labgrid and dut.labgrid.coordinator))]  # type: ignore[union-attr]
    yield lambda: board_checks.firmware(dut)
    yield lambda: board_checks.probe(dut)
    if dut.HAS_CONSOLE and not place and dut.labgrid is None:
        flashes = getattr(dut, "probe", None) is not None
        yield lambda: board_checks.console(dut, flashes)
    yield lambda: pc_port.pc_port(dut)
    if dut.peer is not None:
        yield lambda: [_peer(dut)]
    yield lambda: board_checks.tester(dut)


def _labgrid(place: str, coordinator: str | None) -> Finding:
    import os

    coordinator = coordinator or os.environ.get("LG_COORDINATOR")
    if not coordinator:
        return problem(
            "labgrid place",
            f"{place}: no coordinator",
            "labgrid.coordinator in the bench file, or LG_COORDINATOR=HOST:PORT",
        )
    try:
        answer = PlaceLock(place, coordinator, 0).status()
    except BenchError as exc:
        return problem(
            "labgrid place", str(exc), f"start the coordinator at {coordinator}, or correct the place's name"
        )
    resources = dict(answer.get("resources") or {})  # type: ignore[call-overload]
    gone = [n for n, r in resources.items() if isinstance(r, dict) and not r.get("avail", False)]
    if gone:
        return problem(
            "labgrid place", f"{place}: resources not available: {', '.join(gone)}", "start the place's exporter"
        )
    holder = answer.get("acquired_by")
    held = f", held by {holder} (a run waits for it)" if holder else ", free"
    return ok("labgrid place", f"{place} at {coordinator}: {len(resources)} resource(s){held}")


def _peer(dut: DutBase) -> Finding:
    assert dut.peer is not None
    with contextlib.ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hil-doctor-peer-")))
        try:
            peer = stack.enter_context(real_peer(HardwareLink(dut.network.pc_netns), dut.peer, workdir))
        except BenchError as exc:
            return problem("peer", str(exc).splitlines()[0], "install iperf3, ping and python3 there; check peer.ssh")
        return ok("peer", peer.describe())
