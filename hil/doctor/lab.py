"""What a bench reaches beyond the PC: the labgrid place that shares its board, and the peer host
behind a DUT in the path."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from hil.config.sections import DutBase
from hil.doctor.finding import Finding, ok, problem
from hil.errors import BenchError
from hil.plumbing.hardware_link import HardwareLink
from hil.plumbing.labgrid_place import PlaceLock
from hil.plumbing.peer_host import real_peer


def labgrid_place(place: str, coordinator: str | None) -> Finding:
    """The place at its coordinator, its resources available at their exporter; nothing locked."""
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


def peer_host(dut: DutBase) -> Finding:
    """The peer of a DUT in the path reached (SSH, or the PC's second NIC), with what it runs."""
    assert dut.peer is not None
    with contextlib.ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hil-doctor-peer-")))
        try:
            peer = stack.enter_context(real_peer(HardwareLink(dut.network.pc_netns), dut.peer, workdir))
        except BenchError as exc:
            return problem("peer", str(exc).splitlines()[0], "install iperf3, ping and python3 there; check peer.ssh")
        return ok("peer", peer.describe())
