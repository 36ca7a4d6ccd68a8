"""A case's evidence from the DUT's side, attached to the report: the DUT's own counters before
and after (hil-fw `stats`; ESP-IDF's `free` / `heap`), its console log (without secrets), the
program's log of a DUT that died or has no console; and whose fault a failed transfer through a
DUT in the path is (`dut_stopped_forwarding`)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import TYPE_CHECKING

import allure

from hil.errors import BenchError, DutError
from hil.tools.ping import check_forwarding
from hil.tools.watched_run import Stopped
from hil.wire.watch import capture_text

if TYPE_CHECKING:
    from hil.config.sections import DutBase
    from hil.session import HilContext

LOG_TAIL = 20000  # characters of a program's log attached


def attach_text(name: str, text: str) -> None:
    allure.attach(text or "(empty)", name=name, attachment_type=allure.attachment_type.TEXT)


def attach_dut_stats(ctx: HilContext, name: str) -> None:
    """The DUT's own counters as evidence (nothing for a DUT without a console or a dialect without them)."""
    if ctx.dut.driver is None:
        return
    try:
        text = ctx.dut.driver.snapshot()
    except Exception as exc:  # evidence collection must not hide the test's own failure
        text = f"could not read: {exc}"
    if text is not None:
        attach_text(name, text)


def redacted(text: str, config: DutBase) -> str:
    """The console's text without the Wi-Fi PSK (a stock firmware's shell echoes the join command)."""
    wifi = getattr(config, "wifi", None)
    psk = wifi.psk() if wifi is not None and wifi.psk_env else ""
    return text.replace(psk, "<psk hidden>") if psk else text


def attach_wire(ctx: HilContext) -> None:
    """The case's captures: each side's PCAP (within the run's budget) and its scapy summary; the
    files are removed once attached."""
    if ctx.wire is None:
        return
    finished = ctx.wire.stop()
    if ctx.wire.skipped:
        attach_text("wire: not captured", "\n".join(ctx.wire.skipped))
    near_name = "PC"
    far_name = "peer" if ctx.far_end.behind_dut else "DUT"
    for wire in finished:
        attach_text(f"wire: {wire.side} side capture summary",
                    capture_text(wire, ctx.wire.near, ctx.wire.far, near_name, far_name))  # fmt: skip
        # gzip (level 1: 7x smaller in 20 ms for 6 MB of headers): Wireshark opens it as it is,
        # tcpdump through `zcat FILE | tcpdump -r -`
        packed = gzip.compress(wire.result.path.read_bytes(), compresslevel=1) if wire.result.path.exists() else b""
        name = f"wire: {wire.side} side capture ({wire.result.packets} packets, headers only, pcap.gz)"
        if packed and ctx.wire.settings.may_attach(len(packed)):
            allure.attach(packed, name=name, attachment_type="application/gzip", extension="pcap.gz")
        elif packed:
            budget = ctx.wire.settings.budget_bytes // 1_000_000
            attach_text(name, f"not attached: the run's PCAP budget ({budget} MB, --capture-budget-mb) is spent")
    ctx.wire.remove(finished)


def attach_after(ctx: HilContext) -> None:
    """After the case: its captures (attach_wire), the DUT's counters (its program's log when it
    died, or has no console) and the console log of the case (pytest-embedded's log file holds
    every line read)."""
    try:
        attach_wire(ctx)
    except Exception as exc:  # evidence collection must not hide the test's own failure
        attach_text("wire: capture", f"could not finish the case's capture: {exc}")
    adapter = ctx.dut.adapter
    if ctx.dut.console is None:  # a black box: what its program said
        attach_text("DUT program log", adapter.process_log()[-LOG_TAIL:])
        return
    if adapter.alive():
        attach_dut_stats(ctx, "DUT stats after")
    else:
        attach_text("DUT process log (DUT down)", adapter.process_log()[-LOG_TAIL:])
    logfile = getattr(ctx.dut.embedded, "logfile", None)
    if logfile and os.path.exists(logfile):
        attach_text("DUT console log", redacted(Path(logfile).read_text(errors="replace"), ctx.dut.config))


def dut_stopped_forwarding(ctx: HilContext) -> str | None:
    """Why a DUT in the path is to blame for traffic between the PC and the peer that failed: its
    program is down, or it no longer forwards; None when it still forwards (the bench's fault)."""
    if not ctx.far_end.behind_dut:
        return None
    if not ctx.dut.adapter.alive():
        return f"the DUT stopped during the case (exit code {ctx.dut.adapter.exit_code()})"
    try:
        check_forwarding(ctx.pc_side.netns_prefix, ctx.far_end.ip)
    except DutError as exc:
        return f"the DUT stopped forwarding during the case ({exc})"
    return None


def as_dut_fault(ctx: HilContext, exc: BenchError) -> DutError | None:
    """A bench error of traffic through a DUT in the path that the DUT caused (it died or stopped
    forwarding) as the DUT's fault, naming both; None when the DUT still forwards."""
    stopped = dut_stopped_forwarding(ctx)
    if stopped is None:
        return None
    failed = exc.action if isinstance(exc, Stopped) else f"the traffic failed with: {exc}"
    return DutError(f"{stopped}; {failed}")
