"""A second DUT of the bench file: behind the run's DUT (`peer.dut`: the thesis's bridge with its
own device behind it; the far end of the case's traffic) or beside it on its link (`partner:`, DUT
to DUT; the near end of the case's traffic, where the PC would be). Flashed once for the run,
brought up and health-checked at every case, stopped at the end.

Its console is opened per case as pytest-embedded opens a second DUT (`DutFactory.create` with
its own port: the multi-DUT API beside `--count`), closed with `DutFactory.close()` when the case
ends. Everything that names a DUT names it: a fault of the DUT behind is that DUT's, not the
run's DUT's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from pytest_embedded.dut_factory import DutFactory

from hil.config.sections import DutBase
from hil.console.protocol import FinalLine
from hil.dut.adapter import BenchLink
from hil.dut.kinds import make_adapter
from hil.errors import BenchError, DutError
from hil.plumbing.hardware_link import HardwareLink
from hil.plumbing.in_path import InPathTopology
from hil.plumbing.netns import VirtualTopology
from hil.session import DutSession, DutState, with_joined_address
from hil.traffic.far_end import ConsoleFarEnd


def wifi_of(session: DutSession) -> str | None:
    """What the second DUT reported of its Wi-Fi association at its last bring-up (None: wired)."""
    link = getattr(session.adapter, "wifi", None)
    return link.describe() if link is not None else None


def where(session: DutSession) -> str:
    """The second DUT's place, as its messages say it: "behind the run's DUT", "beside the run's DUT"."""
    return f"{session.relation} the run's DUT"


def flashed_second(cfg: DutBase, link: BenchLink, relation: str, workdir: Path) -> DutSession:
    """The second DUT, flashed: on the virtual bench its firmware started on its own tap, behind the
    DUT in the path (the peer namespace's tap) or beside it (the partner's tap on the DUT's link); a
    board beside a board is flashed as its kind flashes (its probe, or nothing for a preflashed
    one) on the PC's bench NIC's link. A DUT that cannot be flashed is stopped again and named."""
    if relation == "behind" and isinstance(link, InPathTopology):
        view = link.behind()
    elif relation == "beside" and isinstance(link, VirtualTopology):
        view = link.partner_view(cfg.network.dut_ip, cfg.network.dut_mac)
    elif relation == "beside" and isinstance(link, HardwareLink):  # two boards on the PC's bench NIC's switch
        view = link
    else:
        raise BenchError(f"DUT {cfg.name} ({relation} the run's DUT) needs the virtual bench's link for it")
    session = DutSession(make_adapter(cfg, view, workdir), cfg, relation=relation)
    try:
        session.flash()
    except (BenchError, DutError) as exc:
        session.adapter.stop()
        raise type(exc)(f"DUT {cfg.name} ({where(session)}): {exc}") from exc
    return session


@contextlib.contextmanager
def console_of(session: DutSession) -> Iterator[None]:
    """The second DUT's console for one case (pytest-embedded's second DUT on its port)."""
    cfg, adapter = session.config, session.adapter
    embedded = DutFactory.create(
        embedded_services=cfg.EMBEDDED_SERVICES, port=adapter.console_port, baud=cfg.console.baud,
        target=cfg.embedded_target(), skip_autoflash=True,
    )  # fmt: skip
    try:
        session.open_console(embedded)
        yield
    finally:
        session.console = session.driver = None
        DutFactory.close()


def start_second(session: DutSession) -> FinalLine:
    """The second DUT brought up for a case: re-flashed if it went down (a fault the case reports),
    what it says it is, at the bench file's address, and nothing an earlier case left running."""
    cfg, rel = session.config, session.relation
    _, driver = session.require_console()
    if not session.adapter.alive():
        session.faults.append(f"DUT {cfg.name} ({rel}) was down (exit code {session.adapter.exit_code()}); re-flashed")
        session.flash(session.adapter.current_config)
    try:
        identity = driver.identify(cfg.console.boot_timeout_s)
    except (DutError, BenchError) as exc:
        raise DutError(f"DUT {cfg.name} ({where(session)}) does not answer its console: {exc}") from exc
    try:  # a Wi-Fi station joins its pair's SoftAP (the run's DUT, up by now)
        link = session.adapter.associate(driver)
    except DutError as exc:
        raise DutError(f"DUT {cfg.name} ({where(session)}): {exc}") from exc
    if link is not None:  # its address is the one `wifi connect` gave it
        identity = with_joined_address(driver.identify(cfg.console.boot_timeout_s), link)
    if (reported := identity.fields.get("ip")) != cfg.network.dut_ip:
        raise DutError(f"DUT {cfg.name} ({rel}) reports address {reported}, the bench file says {cfg.network.dut_ip}")
    if not session.idle:
        driver.abort_running()
    session.idle, session.identity, session.state = False, identity, DutState.READY
    return identity


def far_end_of(session: DutSession) -> ConsoleFarEnd:
    """The case's far end: the DUT behind's own programs through its console. It is where a peer
    host would be, and cases name it so (`pc_to_peer`, `uplink` from it); the records and the
    report's environment name the DUT itself (`dut_behind`)."""
    _, driver = session.require_console()
    return ConsoleFarEnd(driver, "peer", session.config.network.dut_ip)


def near_end_of(session: DutSession) -> ConsoleFarEnd:
    """The case's near end on a DUT-to-DUT bench: the DUT beside the run's DUT, through its console,
    where the PC would be; named by its own name (`dut_tx` goes to it, `dut_rx` comes from it)."""
    _, driver = session.require_console()
    return ConsoleFarEnd(driver, session.config.name, session.config.network.dut_ip)
