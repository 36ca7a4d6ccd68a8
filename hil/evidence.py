"""A case's evidence from the DUT's side, attached to the report: the DUT's own counters before
and after (hil-fw `stats`; ESP-IDF's `free` / `heap`), its console log (without secrets), the
program's log of a DUT that died or has no console; and whose fault a failed transfer through a
DUT in the path is (`dut_stopped_forwarding`)."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import allure

from hil.errors import BenchError, DutError
from hil.session import which_down
from hil.step_clock import timed
from hil.tools.ping import answers_ping, check_forwarding
from hil.tools.watched_run import Stopped
from hil.traffic.overdue import Silence
from hil.wire.watch import CaseWire, capture_text

if TYPE_CHECKING:
    from hil.config.sections import DutBase
    from hil.session import HilContext

LOG_TAIL = 20000  # characters of a program's log attached
# lwIP's pools a measurement's data passes through (hil.results.dut_side.DATA_POOLS): back at their
# level from before the case once its traffic is over, or the DUT leaked them
LEAK_POOLS = ("PBUF_POOL", "TCP_SEG", "PBUF")
LEAK_SETTLE_S = (0.2, 0.5, 1.0, 2.0)  # re-read after these many seconds before calling a pool leaked


def attach_text(name: str, text: str) -> None:
    allure.attach(text or "(empty)", name=name, attachment_type=allure.attachment_type.TEXT)


Stats = tuple[str | None, dict[str, int] | None]  # the DUT's counters as text and as numbers, one reading


def attach_dut_stats(ctx: HilContext, name: str, reading: Stats | None = None) -> dict[str, int] | None:
    """The DUT's own counters as evidence (nothing for a DUT without a console or a dialect without
    them), from `reading` when the case already took one; returns them as numbers (the pools)."""
    if ctx.dut.driver is None:
        return None
    try:
        with timed("evidence: the DUT's stats attached"):
            text, counters = reading or ctx.dut.driver.stats()
    except Exception as exc:  # evidence collection must not hide the test's own failure
        text, counters = f"could not read: {exc}", None
    if text is not None:
        attach_text(name, text)
    return counters


def attach_second_stats(ctx: HilContext, when: str) -> None:
    """The second DUT's own counters (a bench of two DUTs), as evidence beside the run's DUT's."""
    second = ctx.second
    if second is None or second.driver is None or not second.adapter.alive():
        return
    try:
        with timed("evidence: the second DUT's stats attached"):
            text, _ = second.driver.stats()
    except Exception as exc:  # evidence collection must not hide the test's own failure
        text = f"could not read: {exc}"
    if text is not None:
        attach_text(f"DUT {second.config.name} ({second.relation}) stats {when}", text)


def redacted(text: str, config: DutBase) -> str:
    """The console's text without the Wi-Fi PSK (a stock firmware's shell echoes the join command)."""
    wifi = getattr(config, "wifi", None)
    psk = wifi.psk() if wifi is not None and wifi.psk_env else ""
    return text.replace(psk, "<psk hidden>") if psk else text


def pools_in_use(counters: dict[str, int] | None) -> dict[str, int] | None:
    """The DUT's data pools in use (`pool_<NAME>_used` of its `stats`); None when it does not say."""
    if not counters:
        return None
    found = {name: counters[f"pool_{name}_used"] for name in LEAK_POOLS if f"pool_{name}_used" in counters}
    return found or None


def pools_leaked(ctx: HilContext, before: dict[str, int] | None) -> str | None:
    """What the DUT's data pools hold after a case beyond what they held before it (idle both
    times), once they had up to LEAK_SETTLE_S to return: a buffer leaked per connection or test
    shows here, whatever the case measured (DUT failure). None when they are back, or the DUT does
    not report them."""
    if before is None:
        return None
    grown: dict[str, int] = {}
    for wait_s in (0.0, *LEAK_SETTLE_S):
        with timed("evidence: the DUT's pools back (wait)"):
            time.sleep(wait_s)
        with timed("evidence: the DUT's pools read"):  # the reading "DUT stats after" attaches too
            ctx.stats_after = ctx.dut.driver.stats() if ctx.dut.driver and ctx.dut.adapter.alive() else None
            after = pools_in_use(ctx.stats_after[1]) if ctx.stats_after else None
        if after is None:
            return None
        grown = {name: after[name] - before[name] for name in after if name in before and after[name] > before[name]}
        if not grown:
            return None
    held = ", ".join(f"{name} {n} more" for name, n in grown.items())
    return (
        f"the DUT's pools hold {held} buffers {sum(LEAK_SETTLE_S):g} s after the case than before it, idle both "
        "times: a leak"
    )


def attach_wire(ctx: HilContext) -> None:
    """The case's captures: each side's PCAP (within the run's budget) and its summary; the
    files are removed once attached."""
    if ctx.wire is None:
        return
    finished = ctx.wire.stop()
    if ctx.wire.skipped:
        attach_text("wire: not captured", "\n".join(ctx.wire.skipped))
    near_name = "PC"
    far_name = "peer" if ctx.far_end.behind_dut else "DUT"
    for wire in finished:
        with timed("evidence: capture attached"):
            attach_one_capture(ctx, wire, near_name, far_name)
    ctx.wire.remove(finished)


def attach_one_capture(ctx: HilContext, wire: CaseWire, near_name: str, far_name: str) -> None:
    """One side's capture: its summary and, within the run's budget, the PCAP (gzip)."""
    assert ctx.wire is not None
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


def attach_after(ctx: HilContext) -> None:
    """After the case: its captures (attach_wire), the DUT's counters (its program's log when it
    died, or has no console) and the console log of the case (pytest-embedded's log file holds
    every line read)."""
    try:
        attach_wire(ctx)
    except Exception as exc:  # evidence collection must not hide the test's own failure
        attach_text("wire: capture", f"could not finish the case's capture: {exc}")
    _attach_second_after(ctx)
    adapter = ctx.dut.adapter
    if ctx.dut.console is None:  # a black box: what its program said
        attach_text("DUT program log", adapter.process_log()[-LOG_TAIL:])
        return
    if adapter.alive():
        attach_dut_stats(ctx, "DUT stats after", ctx.stats_after)
    else:
        attach_text("DUT process log (DUT down)", adapter.process_log()[-LOG_TAIL:])
    logfile = getattr(ctx.dut.embedded, "logfile", None)
    if logfile and os.path.exists(logfile):
        with timed("evidence: console log attached"):
            attach_text("DUT console log", redacted(Path(logfile).read_text(errors="replace"), ctx.dut.config))


def _attach_second_after(ctx: HilContext) -> None:
    """The second DUT after the case: its counters, or its program's log when it died, and its console log."""
    behind = ctx.second
    if behind is None:
        return
    name = f"DUT {behind.config.name} ({behind.relation})"
    if behind.adapter.alive():
        attach_second_stats(ctx, "after")
    else:
        attach_text(f"{name} process log (down)", behind.adapter.process_log()[-LOG_TAIL:])
    logfile = getattr(behind.embedded, "logfile", None)
    if logfile and os.path.exists(logfile):
        attach_text(f"{name} console log", redacted(Path(logfile).read_text(errors="replace"), behind.config))


def second_unresponsive(ctx: HilContext) -> str | None:
    """With a second DUT: which DUT is to blame for a failed tool, named (either one stopped; the
    second's console no longer answers; behind a DUT in the path, the PC's ping no longer reaches it
    through the DUT in the path, whose own address still answers or not; beside the run's DUT, the
    run's DUT's console no longer answers); None when both answer."""
    assert ctx.second is not None
    if (down := which_down(ctx.dut, ctx.second)) is not None:
        return down
    behind, front = ctx.second, ctx.dut.config
    for session in (behind, ctx.dut) if behind.relation == "beside" else (behind,):
        if session.driver is not None:
            try:
                session.driver.abort_running()
                session.driver.identify(CONSOLE_ANSWER_S)
            except (DutError, BenchError, OSError) as exc:
                where = f" ({session.relation})" if session.relation else ""
                return f"DUT {session.config.name}{where} no longer answers its console ({exc})"
    if behind.relation == "beside":
        return None
    if not answers_ping(ctx.pc_side.netns_prefix, ctx.far_end.ip):
        if answers_ping(ctx.pc_side.netns_prefix, front.network.dut_ip):
            return (f"the PC's ping no longer reaches DUT {behind.config.name} at {ctx.far_end.ip} through DUT "
                    f"{front.name}, which answers at its own address (the DUT behind at its console)")  # fmt: skip
        return f"DUT {front.name} (in the path) no longer answers the PC's ping at {front.network.dut_ip}"
    return None


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


def dut_unresponsive(ctx: HilContext) -> str | None:
    """Why the DUT is to blame for a tool of the bench that failed during a case (hil.bench_faults
    .TOOL_FAILED): a DUT in the path that stopped forwarding or died; an endpoint DUT whose program
    stopped, whose console no longer answers, or that no longer answers the PC's ping. None when it
    still answers all of them: the tool's failure is then the bench's."""
    if ctx.second is not None:
        return second_unresponsive(ctx)
    if ctx.far_end.behind_dut:
        return dut_stopped_forwarding(ctx)
    adapter = ctx.dut.adapter
    if not adapter.alive():
        return f"the DUT stopped during the case (exit code {adapter.exit_code()})"
    driver = ctx.dut.driver
    if driver is not None:
        try:
            driver.abort_running()  # whatever the failed flow left running on it
            driver.identify(CONSOLE_ANSWER_S)
        except (DutError, BenchError, OSError) as exc:
            return f"the DUT's console no longer answers ({exc})"
    if not answers_ping(ctx.pc_side.netns_prefix, ctx.far_end.ip):
        return f"the DUT no longer answers the PC's ping at {ctx.far_end.ip}"
    return None


CONSOLE_ANSWER_S = 10.0


def as_dut_fault(ctx: HilContext, exc: BenchError) -> DutError | None:
    """A tool of the bench that failed during a case, as the DUT's fault when the DUT stopped
    answering (dut_unresponsive), naming both; None when the DUT still answers (the bench's)."""
    stopped = dut_unresponsive(ctx)
    if stopped is None:
        if isinstance(exc, Stopped) and isinstance(exc.reason, Silence):  # never a bench fault: see Silence
            return DutError(f"{exc}; it answers again now, but a far end that went silent is the DUT's failure")
        return None
    failed = f"the traffic failed with: {exc}"
    if isinstance(exc, Stopped):  # its reason, unless it is the one just given (the DUT's program stopped)
        failed = exc.action if exc.reason in stopped else f"{exc.action} ({exc.reason})"
    return DutError(f"{stopped}; {failed}")
