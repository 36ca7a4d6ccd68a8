"""A DUT through a run, in the library (the pytest layer in fixtures/ only wires it up).

Bring-up is a sequence of explicit states, each reached by one step and recorded:

    down --flash--> flashed --identify--> booted --associate--> associated --address check--> ready

`associate` is the kind's own step (a Wi-Fi station joins its access point; a wired DUT has
nothing to join and passes straight on). A DUT found down before a test is flashed again, and
that fault is told in the next test's report. The test context (`HilContext`) gives a scenario
one handle on the DUT (`dut`: what it is, its console and dialect, re-flashing it), the far end
it talks to (hil.traffic.far_end), the PC's side, the thresholds, the recorder and the profile.
"""

from __future__ import annotations

import contextlib
import platform
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import allure

from hil.config.sections import DutBase
from hil.config.thresholds import ThresholdProfile
from hil.console.dialects.base import DialectDriver
from hil.console.dialects.registry import dialect_info, make_driver
from hil.console.embedded_console import EmbeddedConsole
from hil.console.protocol import FinalLine
from hil.directions import direction_name
from hil.dut.adapter import BenchLink, DutAdapter
from hil.dut.build_identity import build_identity
from hil.dut.planted_defects import describe, plant
from hil.errors import BenchError, DutError
from hil.plumbing.in_path import InPathTopology
from hil.plumbing.peer_host import PeerHost
from hil.results.baseline import Baseline
from hil.results.recorder import Recorder
from hil.scenarios.profiles import Profile
from hil.stats import summarize
from hil.step_clock import timed
from hil.tools.ping import answers_ping, check_forwarding, ping_argv, run_ping
from hil.tools.watched_run import StopWhen
from hil.traffic.far_end import ConsoleFarEnd, FarEnd, HostFarEnd
from hil.traffic.roles import PcSide
from hil.wire.watch import WireWatch

RTT_PINGS = 5
# (the delay line holds each frame in a queue, several in flight: the 0.2-s interval's 0.8 s a case,
# 17 cases of the test command's virtual matrix, was only waiting)
RTT_PING_INTERVAL_S = 0.01


class DutState(StrEnum):
    DOWN = "down"
    FLASHED = "flashed"
    BOOTED = "booted"
    ASSOCIATED = "associated"
    READY = "ready"


class NoDelayLine(Exception):
    """The DUT's firmware has no link delay line (`linkdelay`): e.g. an ESP32 image on ESP-IDF's lwIP."""


def with_joined_address(identity: FinalLine, link: object) -> FinalLine:
    """What a DUT says it is, with the address its Wi-Fi join reported where its console does not
    say one (a stock firmware's `sta ip:` line)."""
    ip = getattr(link, "ip", None)
    if not ip or "ip" in identity.fields:
        return identity
    return FinalLine(identity.kind, identity.command, {**identity.fields, "ip": ip})


@dataclass
class DutSession:
    """The DUT of the run: its adapter, its bring-up state, what it said when it booted, and the
    faults the next test must report."""

    adapter: DutAdapter
    config: DutBase
    state: DutState = DutState.DOWN
    identity: FinalLine | None = None
    faults: list[str] = field(default_factory=list)
    environment_written: bool = False
    # nothing of a test runs on the DUT: just flashed, or the last test ended with its traffic done
    # (passed, or failed a check after it); otherwise the next test aborts what may still run
    idle: bool = False
    # the test's console on the DUT (pytest-embedded's `dut`), its dialect driver; None: no console
    console: EmbeddedConsole | None = None
    driver: DialectDriver | None = None
    embedded: object = None  # pytest-embedded's `dut` itself (its log is evidence)
    # defects to plant in the firmware at every bring-up (--plant-defect: the suite's own self-test)
    planted: dict[str, int] = field(default_factory=dict)
    # where a second DUT of the run sits, as messages name it: "behind" (behind the DUT in the path)
    # or "beside" (on the DUT's link, the other end of its traffic); "" for the run's DUT
    relation: str = ""

    def open_console(self, embedded: object) -> None:
        """The test's console: pytest-embedded's `dut` on the console port, in the DUT's dialect."""
        self.embedded = embedded
        self.console = EmbeddedConsole(embedded, alive=self.adapter.alive)  # type: ignore[arg-type]
        self.driver = make_driver(self.config.console.dialect, self.console)

    def start_test(self, recorder: Recorder, answers_at: Callable[[str], bool]) -> FinalLine:
        """Brings the DUT up for a test (hil.session states), stops what an earlier test left
        running on it, and records its facts (e.g. the free heap) with every result of the test."""
        identity = self.bring_up(self.driver, recorder, answers_at=answers_at)
        if not self.idle and self.driver is not None:  # an earlier test ended before its traffic did
            self.driver.abort_running()
        self.idle = False  # until this test ends with its traffic done
        if self.driver is not None:
            recorder.set_dut_facts(self.driver.facts())
        return identity

    def stopped(self) -> StopWhen:
        """Why traffic through the DUT is moot now: its program on the bench PC is gone (a board
        has no process to watch: its adapter is always alive, and the generators' timeouts stay)."""

        def reason() -> str | None:
            return None if self.adapter.alive() else f"the DUT stopped (exit code {self.adapter.exit_code()})"

        return reason

    def far_end(self, peer: PeerHost | None, pc: PcSide, workdir: Path) -> FarEnd:
        """What the test's traffic talks to: the peer host behind a DUT in the path (checked to
        reach it through the DUT first: a DUT that stopped forwarding is a DUT fault), else the
        DUT's console in its dialect."""
        if peer is not None:
            workdir.mkdir(parents=True, exist_ok=True)
            far = HostFarEnd("peer", peer.prefix, peer.ip, workdir, pc.tcp_congestion, python=peer.python,
                             stop_when=pc.stop_when)  # fmt: skip
            check_forwarding(pc.netns_prefix, peer.ip)
            return far
        if self.driver is not None:
            return ConsoleFarEnd(self.driver, "DUT", self.config.network.dut_ip)
        raise BenchError(f"DUT {self.config.name} has no console and no peer: nothing to send traffic to")

    def start_case(
        self, recorder: Recorder, link: BenchLink, peer: PeerHost | None, workdir: Path, congestion: str | None,
    ) -> tuple[FarEnd, PcSide, FinalLine]:  # fmt: skip
        """A case's start: the DUT brought up (`start_test`: what it says it is, for the case's
        page), and the PC's side and the far end the case talks to."""
        pc_ns = link.exec_prefix(link.pc_ns)  # type: ignore[arg-type]
        with timed("case start: the DUT's identity"):
            identity = self.start_test(recorder, answers_at=lambda ip: answers_ping(pc_ns, ip))
        (workdir / "pc").mkdir()
        stop_when = self.stopped() if peer is not None else None  # a client stalled behind a dead DUT stops
        pc = PcSide(pc_ns, self.config.network.pc_ip, workdir / "pc", congestion, stop_when)
        return self.far_end(peer, pc, workdir / "peer"), pc, identity

    def counters(self, mark: bool = False) -> dict[str, int] | None:
        """The DUT's own counters as numbers, for a loss ledger and the DUT's side of a measurement
        (None: no console, no counters, or down); `mark`: its high-water marks restart after this reading."""
        if self.driver is None or not self.adapter.alive():
            return None
        return self.driver.counters(mark)

    def require_console(self) -> tuple[EmbeddedConsole, DialectDriver]:
        """The DUT's console and its dialect driver; a case that needs them on a DUT without a
        console is a bench error naming it."""
        if self.console is None or self.driver is None:
            raise BenchError(f"DUT {self.config.name} has no console (kind {self.config.kind}): this case needs one")
        return self.console, self.driver

    def flash(self, config: str | None = None) -> None:
        self.state = DutState.DOWN
        self.idle = False
        self.adapter.flash(config)
        self.state = DutState.FLASHED
        self.idle = True

    def ensure_flashed(self, config: str, any_config: bool = False) -> None:
        """Flashes a DUT that crashed, reset or was killed (a fault the next test reports), or
        that holds another build configuration (e.g. after a ladder test) unless `any_config`
        (a ladder step flashes its own build next)."""
        if not self.adapter.alive():
            self.faults.append(f"DUT was down (exit code {self.adapter.exit_code()}); re-flashed")
            self.flash(config)
        elif self.adapter.current_config != config and not any_config:
            self.flash(config)

    def bring_up(
        self, driver: DialectDriver | None, recorder: Recorder, answers_at: Callable[[str], bool] | None = None
    ) -> FinalLine:
        """flashed -> booted -> associated -> ready; returns what the DUT says it is (a DUT without
        a console: what its kind says; its health is the traffic's, checked by the caller). A
        firmware whose console does not tell its address (stock test firmware on a wired link) is
        found at the bench file's address by `answers_at` (the PC pings it)."""
        known = self.adapter.identity()
        if driver is None or known is not None:
            if known is None:
                raise BenchError(f"DUT {self.config.name}: no console and no identity from its kind")
            meter = self.adapter.cpu_meter()
            recorder.set_dut_cpu(meter.window if meter is not None else None)
            self.identity, self.state = known, DutState.READY
            recorder.firmware = self.build_identity(known)
            return known
        boot_timeout = self.config.console.boot_timeout_s
        identity = driver.identify(boot_timeout)
        self.state = DutState.BOOTED
        link = self.adapter.associate(driver)
        if link is not None:
            recorder.set_link(link.as_fields())  # recorded with every result from now on
            allure.dynamic.parameter("Wi-Fi", link.describe())
            identity = with_joined_address(driver.identify(boot_timeout), link)
        self.state = DutState.ASSOCIATED
        wanted = self.config.network.dut_ip
        reported = identity.fields.get("ip")
        if reported is None:
            if answers_at is not None and not answers_at(wanted):
                raise DutError(
                    f"the DUT does not answer at the bench file's address {wanted} (its {driver.info.name} "
                    "console does not say its address: set the firmware's address to network.dut_ip)"
                )
        elif reported != wanted:
            raise DutError(
                f"the DUT reports address {reported}, the bench file says "
                f"{wanted} (board images take theirs at build time: FW_BOARD_IP)"
            )
        meter = self.adapter.cpu_meter()
        recorder.set_dut_cpu(meter.window if meter is not None else None)  # a DUT on the bench PC: its host share
        if self.planted:  # the suite's self-test: the firmware made a defective DUT on purpose
            recorder.planted = plant(self.console, self.planted)  # type: ignore[arg-type]
        self.identity = identity
        recorder.firmware = self.build_identity(identity)
        self.state = DutState.READY
        return identity

    def build_identity(self, identity: FinalLine) -> dict[str, str]:
        """The build the DUT runs (hil.dut.build_identity): what it says, and what was flashed; with
        the defects planted in it on purpose (--plant-defect), which make it another DUT."""
        found = build_identity(identity.fields.get("version"), self.adapter.flashed, self.adapter.current_config)
        return found | ({"planted": ",".join(f"{k}={v}" for k, v in self.planted.items())} if self.planted else {})


def which_down(front: DutSession, behind: DutSession) -> str | None:
    """Which of the two DUTs stopped (its name and exit code), None when both still run."""
    first = "in the path" if behind.relation == "behind" else "the run's DUT"
    for session, where in ((front, first), (behind, f"{behind.relation} it")):
        if not session.adapter.alive():
            return (
                f"DUT {session.config.name} ({where}) stopped during the case (exit code {session.adapter.exit_code()})"
            )
    return None


@dataclass
class HilContext:
    dut: DutSession  # the DUT: what it is, its console and dialect driver
    # where the PC's traffic ends and what a scenario asks of it: the DUT's console, or the peer
    # host behind a DUT in the path (hil.traffic.far_end)
    far_end: FarEnd
    pc_side: PcSide
    thresholds: ThresholdProfile
    recorder: Recorder
    profile: Profile
    repeat: int
    duration_s: float
    link_mbit: float
    topology: BenchLink
    baseline: Baseline | None = field(default=None, repr=False)  # the known-good run of the regression gate
    # a miss on a DUT running on the bench PC is measured again, the majority of three trials the
    # verdict (hil.scenarios.sweep.confirm_miss)
    confirm_misses: bool = False
    wire: WireWatch | None = None  # the case's captures and counters (hil.wire), None: not watched
    bench_file: str = ""  # the bench file of the run, as given (for commands a message suggests)
    # a second DUT (hil.behind): behind this one (its peer.dut: it ends the traffic, far_end is its
    # console) or beside it on its link (its partner: the near end, pc_side.near, is its console)
    second: DutSession | None = field(default=None, repr=False)
    # the DUT's stats read after the case's traffic (its pools checked): attached as "DUT stats after"
    stats_after: tuple[str | None, dict[str, int] | None] | None = field(default=None, repr=False)

    @property
    def in_path(self) -> bool:
        """The DUT forwards traffic between the PC and a peer host."""
        return self.dut.config.in_path

    def rate_step(self, direction: str) -> float | None:
        """The step of the UDP rates the sender of `direction` can be asked (a console whose iperf
        takes whole Mbit/s: 1.0): the DUT's console for `dut_tx`, its partner's for `dut_rx` on a
        DUT-to-DUT bench; None: any rate (the PC's and a peer host's iperf)."""
        sender = self.far_end if direction == "dut_tx" else self.pc_side.near
        step = getattr(getattr(sender, "driver", None), "rate_step_mbps", None)
        return float(step) if isinstance(step, int | float) else None

    def direction(self, direction: str) -> str:
        """A traffic direction (`dut_tx`, `dut_rx`) as case ids name it: `uplink` / `downlink`
        for a DUT in the path (hil.directions)."""
        return direction_name(direction, self.in_path)

    def flash_config(self, config: str) -> FinalLine:
        """Flashes another build configuration of the firmware and returns its identity."""
        self.dut.flash(config)
        identity = self.dut.bring_up(self.dut.require_console()[1], self.recorder)
        if identity.fields.get("variant") not in (config, None):
            raise DutError(f"flashed config {config!r} but the DUT reports variant {identity.fields.get('variant')!r}")
        return identity

    @contextlib.contextmanager
    def delayed_ingress(self, delay_ms: int) -> Iterator[float]:
        """Every frame the DUT receives held `delay_ms` by the firmware's link delay line (a known
        bandwidth-delay product on any machine); yields the median round trip the PC's ping
        measures through it, and turns the line off afterwards. NoDelayLine when the firmware has
        none."""
        console, _ = self.dut.require_console()
        reply = console.command(f"linkdelay {delay_ms}", 10)
        if not reply.final.ok:
            if "unknown command" in reply.final.reason:
                raise NoDelayLine(f"the DUT's firmware has no link delay line ({reply.final.reason})")
            raise DutError(f"DUT refused `linkdelay {delay_ms}`: {reply.final.reason}")
        try:
            yield self._ping_rtt_ms()
        finally:
            if self.dut.adapter.alive():
                console.run_ok("linkdelay 0", 10)

    def _ping_rtt_ms(self) -> float:
        argv = ping_argv(self.pc_side.netns_prefix, self.dut.config.network.dut_ip, count=RTT_PINGS,
                         interval_s=RTT_PING_INTERVAL_S, wait_s=2)  # fmt: skip
        stats, _ = run_ping(argv, timeout_s=30)
        if not stats.rtts_ms:
            raise DutError(f"the DUT answered none of {RTT_PINGS} pings through the delayed link")
        return summarize(list(stats.rtts_ms)).median


def _tool_version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "not installed"
    text = (out.stdout + out.stderr).strip().splitlines()
    return text[0] if text else "unknown"


def _host_congestion_control() -> str:
    try:
        return Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    except OSError:
        return "unknown"


def environment(
    session: DutSession, identity: FinalLine, link: BenchLink, tcp_congestion: str | None,
    peer: PeerHost | None = None, behind: DutSession | None = None,
) -> dict[str, str]:  # fmt: skip
    """What the report's environment panel says of the run: DUT, firmware, stack, link, the
    kind's own facts, the PC's tools."""
    f = identity.fields
    cfg = session.config
    dialect = cfg.console.dialect
    cfg_link = cfg.link
    shaped = link.pc_shaping is not None if isinstance(link, InPathTopology) else link.shaping
    # a DUT with the project's firmware says its stack and address; a black box says neither
    stack = {
        "Stack": f"TCP_MSS {f.get('tcp_mss')}, TCP_WND {f.get('tcp_wnd')}, TCP_SND_BUF {f.get('tcp_snd_buf')}, "
        f"PBUF_POOL_SIZE {f.get('pbuf_pool_size')}, MEM_SIZE {f.get('mem_size')}",
        "DUT_address": f"{f.get('ip')} / {f.get('mac')}",
    }
    return {
        "Topology": _topology(cfg, link),
        **({"Peer": peer.describe()} if peer is not None else {}),
        **({f"DUT_{'behind' if behind.relation == 'behind' else 'partner'}": _behind(behind)} if behind else {}),
        "DUT": f"{cfg.name} (kind {cfg.kind}, flasher {cfg.flasher_name})",
        **({"Console": f"dialect {dialect} ({dialect_info(dialect).what})"} if cfg.HAS_CONSOLE else {}),
        "Firmware": f"{f.get('name')} {f.get('version')} target {f.get('target')} variant {f.get('variant')}",
        **(stack if "tcp_mss" in f else {}),
        "Link": (f"tbf {cfg_link.rate_mbit:g} Mbit/s overhead 24" if cfg_link.shaping and shaped else "unshaped")
        + (f", {cfg_link.loss_pct:g} % injected loss" if cfg_link.loss_pct else "")
        + ("" if cfg.local else f", real {cfg_link.rate_mbit:g} Mbit/s link"),
        **session.adapter.environment(),
        **({"Planted_defects": f"ON PURPOSE (--plant-defect): {describe(session.planted)}"} if session.planted else {}),
        "PC_TCP_congestion_control": tcp_congestion or f"host default ({_host_congestion_control()})",
        "Kernel": platform.release(),
        "iperf2": _tool_version(["iperf", "-v"]),
        "iperf3": _tool_version(["iperf3", "-v"]),
    }


def _behind(behind: DutSession) -> str:
    """The second DUT (behind the run's DUT, or its partner beside it), for the report's environment:
    what it is and runs."""
    cfg, f = behind.config, (behind.identity.fields if behind.identity is not None else {})
    return (f"{cfg.name} (kind {cfg.kind}, {cfg.network.dut_ip}): {f.get('name')} {f.get('version')} variant "
            f"{f.get('variant')}, TCP_WND {f.get('tcp_wnd')}, TCP_MSS {f.get('tcp_mss')}")  # fmt: skip


def _topology(cfg: DutBase, link: BenchLink) -> str:
    """Where the DUT sits: at the end of the PC's link, or in the path between the PC and a peer."""
    if cfg.partner is not None:
        pair = f"DUT {cfg.name} {cfg.network.dut_ip} and DUT {cfg.partner}"
        ports = "each on its own tap" if cfg.local else "each on its own port of the bench NIC's switch"
        return f"PC {cfg.network.pc_ip} <-> [{pair} on one link, {ports}]: the traffic runs between them"
    if cfg.peer is None:
        return "PC <-> DUT (the DUT terminates the traffic)"
    where = f"namespace {link.peer_ns}" if isinstance(link, InPathTopology) else "a host of the bench"
    peer_link = f"tbf {cfg.peer.rate_mbit:g} Mbit/s" if cfg.peer.rate_mbit else "unshaped"
    if cfg.peer.dut is not None:
        return (f"PC {cfg.network.pc_ip} <-> DUT {cfg.name} (in the path, forwarding) <-> DUT {cfg.peer.dut} "
                f"{cfg.peer.ip} ({where}, link {peer_link}; it ends the traffic)")  # fmt: skip
    peer = f"peer {cfg.peer.ip} ({where}, link {peer_link})"
    return f"PC {cfg.network.pc_ip} <-> DUT (in the path, forwarding) <-> {peer}"
