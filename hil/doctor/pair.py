"""Two DUTs of one bench file joined as a run joins them: the DUT beside the run's DUT on its link
(`partner:`, DUT to DUT; a Wi-Fi station joining the SoftAP of its pair) or behind it (`peer.dut`:
a bridge with its own endpoint behind it). Both are brought up on the run's link in the run's
order, with the run's code for the second DUT (hil.behind), then each end reaches the other:
DUT to DUT each console pings the other; behind a bridge the PC pings the endpoint through the
bridge, and the endpoint's console pings the PC back. Everything is removed again. No traffic.
Two boards are joined as they are (the doctor programs nothing); boards on labgrid places are left
to a run (the doctor locks no place)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hil.behind import flashed_second, start_second, wifi_of
from hil.config.errors import ConfigError
from hil.config.sections import DutBase
from hil.console.dialects.base import DialectDriver
from hil.console.dialects.registry import make_driver
from hil.console.serial_console import SerialConsole
from hil.doctor.finding import Finding, ok, problem
from hil.dut.bench_file import BenchConfig
from hil.dut.kinds import make_adapter
from hil.errors import BenchError, DutError
from hil.plumbing.hardware_link import HardwareLink
from hil.plumbing.in_path import InPathTopology
from hil.plumbing.links import open_bench_link
from hil.plumbing.netns import VirtualTopology
from hil.session import DutSession
from hil.tools.ping import answers_ping

PINGS = 3  # each way: enough to show the pair answers, not a measurement
FIX = "run ./suite setup (it installs and builds what the bench needs), then ./suite doctor again"


@dataclass(frozen=True)
class Pair:
    front: DutBase  # the run's DUT (the bench file's DUT that names the other)
    second: DutBase
    relation: str  # "beside" (partner:) or "behind" (peer.dut)

    @property
    def title(self) -> str:
        if self.relation == "behind":
            return f"DUT {self.second.name} behind DUT {self.front.name}"
        return f"DUTs {self.front.name} and {self.second.name} on one link"


def pairs_of(bench: BenchConfig) -> list[Pair]:
    """The bench file's pairs, as its runs join them (its checks allow one DUT in one pair)."""
    by_name = {d.name: d for d in bench.duts}
    found = []
    for dut in bench.duts:
        if dut.partner is not None and dut.partner in by_name:
            found.append(Pair(dut, by_name[dut.partner], "beside"))
        behind = dut.peer.dut if dut.peer is not None else None
        if behind is not None and behind in by_name:
            found.append(Pair(dut, by_name[behind], "behind"))
    return found


def in_pairs(pairs: list[Pair]) -> set[str]:
    """The DUTs checked in their pair rather than alone (a run never brings them up alone)."""
    return {d.name for p in pairs for d in (p.front, p.second)}


def _pings(check: str, driver: DialectDriver, target: str) -> Finding:
    """`check` ("a -> b"): the console's ping of `target`; all answered, or the loss named."""
    missing = driver.ping_missing()
    if missing is not None:
        return ok(check, f"not asked: {missing}")
    try:
        stats, said = driver.ping(target, PINGS, 0.2, 10.0)
    except (BenchError, DutError) as exc:
        return problem(check, f"{exc}".splitlines()[0], _reach_fix(check))
    if stats.received < stats.sent or not stats.rtts_ms:
        last = (said.strip().splitlines() or ["(nothing)"])[-1]
        return problem(check, f"{stats.received}/{stats.sent} answered ({last[:120]})", _reach_fix(check))
    return ok(check, f"{stats.received}/{stats.sent} answered, {max(stats.rtts_ms):.2f} ms at most")


def _reach_fix(check: str) -> str:
    return f"{check.split(' -> ')[0]}'s address and prefix: network.dut_ip / prefix_len in the bench file"


def _front_up(pair: Pair, adapter: object, console: SerialConsole) -> tuple[DialectDriver, list[Finding]]:
    """The run's DUT on its console: what it says it is; a SoftAP started."""
    front = pair.front
    driver = make_driver(front.console.dialect, console)
    identity = driver.identify(front.console.boot_timeout_s)
    found = []
    link = adapter.associate(driver)  # type: ignore[attr-defined]
    if link is not None:
        identity = driver.identify(front.console.boot_timeout_s)
        found.append(ok(front.name, f"{link.describe()}"))
    reported = identity.fields.get("ip")
    if reported is not None and reported != front.network.dut_ip:
        raise DutError(f"DUT {front.name} reports address {reported}, the bench file says {front.network.dut_ip}")
    found.append(ok(front.name, f"{identity.fields.get('role', '?')} at {reported or front.network.dut_ip}"))
    return driver, found


def join(pair: Pair) -> list[Finding]:
    """The pair brought up as a run brings it up, each end reaching the other, then removed."""
    found: list[Finding] = []
    front, second = pair.front, pair.second
    placed = [d.name for d in (front, second) if d.labgrid is not None]
    if placed:  # their consoles are the places' (hil.doctor.lab checked each place, locking nothing)
        return [ok("pair", f"not joined: DUT {', '.join(placed)} on labgrid places, which the doctor does not "
                           "lock; a run holds both and joins them")]  # fmt: skip
    with contextlib.ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hil-doctor-pair-")))
        try:
            link = stack.enter_context(open_bench_link(front))
        except (BenchError, ConfigError, OSError) as exc:
            return [problem("pair link", f"{exc}".splitlines()[0], FIX)]
        needs = InPathTopology if pair.relation == "behind" else (VirtualTopology, HardwareLink)
        if not isinstance(link, needs):
            return [
                problem(
                    "pair link",
                    f"DUT {second.name} {pair.relation} DUT {front.name} needs the virtual bench's link "
                    f"({type(link).__name__} here)",
                    "two boards in one run are not supported yet: run each board's bench file alone",
                )
            ]
        found.append(ok("pair link", f"{type(link).__name__} up: {pair.title}"))
        adapter = make_adapter(front, link, workdir / front.name)
        stack.callback(adapter.stop)
        try:
            if isinstance(link, HardwareLink):  # two boards as they are: the doctor programs nothing
                session = DutSession(make_adapter(second, link, workdir / second.name), second, relation="beside")
            else:
                adapter.flash()
                session = flashed_second(second, link, pair.relation, workdir / second.name)
        except (BenchError, DutError, ConfigError) as exc:
            return [*found, problem("firmware", f"{exc}".splitlines()[0], FIX)]
        stack.callback(session.adapter.stop)
        console = stack.enter_context(SerialConsole(adapter.console_port, front.console.baud))  # type: ignore[attr-defined]
        stack.enter_context(_console_of(session))
        try:
            if pair.relation == "behind":  # as a run: the far end is up before the DUT in the path
                second_said = start_second(session)
                driver, said = _front_up(pair, adapter, console)
            else:  # the run's DUT first: a station joins its SoftAP
                driver, said = _front_up(pair, adapter, console)
                second_said = start_second(session)
        except (BenchError, DutError) as exc:
            return [*found, problem("pair bring-up", f"{exc}".splitlines()[0], _bring_up_fix(pair, exc))]
        wifi = wifi_of(session)
        role = second_said.fields.get("role", "?")
        found += [*said, ok(second.name, f"{role} at {second.network.dut_ip}{', Wi-Fi ' + wifi if wifi else ''}")]
        _, second_driver = session.require_console()
        if pair.relation == "behind":
            pc = link.exec_prefix(link.pc_ns)  # type: ignore[attr-defined]
            through = f"PC -> {second.name}"
            if answers_ping(pc, second.network.dut_ip):
                found.append(ok(through, f"answers at {second.network.dut_ip} through {front.name}"))
            else:
                fix = f"{front.name}'s forwarding, and peer.ip = {second.name}'s network.dut_ip"
                found.append(problem(through, f"no answer at {second.network.dut_ip} through {front.name}", fix))
            found.append(_pings(f"{second.name} -> PC", second_driver, front.network.pc_ip))
        else:
            found.append(_pings(f"{second.name} -> {front.name}", second_driver, front.network.dut_ip))
            found.append(_pings(f"{front.name} -> {second.name}", driver, second.network.dut_ip))
    return found


@contextlib.contextmanager
def _console_of(session: DutSession) -> Iterator[None]:
    """The second DUT's console on its port, as the doctor opens any console (a run opens it as
    pytest-embedded's second DUT, which needs pytest running)."""
    cfg = session.config
    with SerialConsole(session.adapter.console_port, cfg.console.baud) as console:  # type: ignore[attr-defined]
        session.console = console  # type: ignore[assignment]
        session.driver = make_driver(cfg.console.dialect, console)
        try:
            yield
        finally:
            session.console = session.driver = None


def _bring_up_fix(pair: Pair, exc: Exception) -> str:
    text = str(exc)
    if "NO_AP_FOUND" in text:
        return f"wifi.ssid of {pair.second.name} must be the SoftAP's ({pair.front.name}'s wifi.ssid)"
    if "4WAY_HANDSHAKE_TIMEOUT" in text:  # reason 15: the SoftAP refused the station's proof
        return f"both DUTs' wifi.psk_env must name the same passphrase ({pair.front.name} is the SoftAP)"
    if "AUTH_FAIL" in text:  # reason 202: a secured SoftAP, and the station sent no passphrase
        return f"give {pair.second.name} the SoftAP's passphrase: wifi.psk_env"
    return "the named DUT's console log: ./suite main --bench this file keeps it under results/dut/"
