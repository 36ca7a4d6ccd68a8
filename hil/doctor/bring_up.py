"""A DUT that runs on the bench PC (the virtual bench, QEMU, a DUT in the path): brought up as a
run brings it up - namespaces, links, the program started on its console - asked what it is, its
peer reached, and everything removed again. No traffic."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from hil.config.errors import ConfigError
from hil.config.sections import DutBase
from hil.doctor.finding import Finding, ok, problem
from hil.doctor.serial_port import console_answers
from hil.dut.kinds import make_adapter
from hil.errors import BenchError, DutError
from hil.plumbing.links import open_bench_link, reach_peer

FIX = "run ./suite setup (it installs and builds what the bench needs), then ./suite doctor again"


def bring_up(dut: DutBase) -> list[Finding]:
    found: list[Finding] = []
    with contextlib.ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hil-doctor-")))
        try:
            link = stack.enter_context(open_bench_link(dut))
        except (BenchError, ConfigError, OSError) as exc:
            return [problem("bench link", f"{exc}".splitlines()[0], FIX)]
        found.append(ok("bench link", type(link).__name__ + " up (namespaces, links, shaping)"))
        adapter = make_adapter(dut, link, workdir / "dut")
        stack.callback(adapter.stop)
        try:
            adapter.flash()
        except (BenchError, DutError, ConfigError) as exc:
            return [*found, problem("firmware", f"{exc}".splitlines()[0], FIX)]
        found.append(ok("firmware", f"{', '.join(p.name for p in adapter.flashed) or 'no image'} started"))
        if dut.HAS_CONSOLE:
            on_pty = dut.model_copy(update={"console": dut.console.model_copy(update={"port": adapter.console_port})})
            answered, said = console_answers(on_pty, dut.console.boot_timeout_s)
            if answered:
                found.append(ok("console", f"{dut.console.dialect}: {said}"))
            else:  # (its log goes with the doctor's temporary directory: its last line is the clue)
                last = (adapter.process_log().strip().splitlines() or ["(the program printed nothing)"])[-1]
                alive = "is running" if adapter.alive() else f"exited with code {adapter.exit_code()}"
                found.append(
                    problem(
                        "console",
                        f"no answer: {said}; the program {alive}, its log ends: {last[:160]}",
                        "check console.dialect in the bench file, then ./suite setup (a stale build)",
                    )
                )
        if dut.peer is not None:
            try:
                peer = stack.enter_context(reach_peer(link, dut, workdir / "peer"))
            except BenchError as exc:
                return [*found, problem("peer", f"{exc}".splitlines()[0], "install what it lacks on the peer host")]
            if peer is not None:
                found.append(ok("peer", peer.describe()))
    return found
