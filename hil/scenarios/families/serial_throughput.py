"""Serial throughput: the DUT's console as a data channel (seed 004, the thesis's section 5.4,
"UART Downlink/Uplink Using CDC-ACM": a 160,292-byte file of raw binary data sent in blocks of 8,
16, 32, 64, 96, 128, 160 and 256 bytes, throughput per block size; seed 002, ezTCP: throughput =
bytes / measured time, performance = throughput / nominal rate x 100 %).

Each case moves the file one way in one block size (`serial/dut_rx-b8`: PC -> DUT,
`serial/dut_tx-b256`: DUT -> PC) through the project firmware's `serial` command, each block
acknowledged before the next (hil.console.serial_transfer): the receiver checks every byte, the
case records the throughput in kbit/s and bytes per second (the PC's clock), the corrupted and the
missing bytes, and its default limits are none of either (`max_corrupted: 0, max_missing: 0`; a
bench's threshold file overrides them under `serial:`). The nominal rate is the console's baud
rate at 10 bits a byte (8N1: start, 8 data, stop bits), which a CDC-ACM port states as its line
coding (the SAME70 Xplained's EDBG forwards it to the USART at that rate); a pseudo-terminal (the
virtual bench's DUT, QEMU's UART) has none: its cases give bytes per second only, no efficiency,
and say so. On a port with a baud rate the cases also sweep it (`serial/dut_rx-b256-baud460800`:
the largest block size at each rate, both ends switched by `serial baud`). The last block size
(and the last rate) of a direction carries the direction's table and chart.

The block sizes, the file's size and the baud rates are the same in both profiles (the thesis's);
--serial-blocks, --serial-bytes and --serial-bauds override them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import allure

from hil.checks import BenchFault, Regression, criteria, headline
from hil.console.dialects.capabilities import NotApplicable
from hil.console.serial_transfer import TransferResult, TransferSpec, raw_port, transfer
from hil.errors import DutError
from hil.report.background_charts import attach_chart
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.charts import limit_line, sweep_chart
from hil.scenarios.contract import BenchFacts, Case, register
from hil.scenarios.families.sweeps import Axis, axis_points, int_list
from hil.scenarios.metrics import ScenarioShape
from hil.scenarios.sweep import attach_text, check, compare_with_baseline, confirm_miss
from hil.stats import summarize

if TYPE_CHECKING:
    from hil.session import HilContext

THESIS_FILE = 160_292  # bytes (thesis 5.4.1)
THESIS_BLOCKS = (8, 16, 32, 64, 96, 128, 160, 256)
BAUDS = (115_200, 230_400, 460_800, 921_600)
BITS_PER_BYTE = 10  # a UART's 8N1 frame: start bit, 8 data bits, stop bit
BLOCK_WAIT_S = 1.0  # the PC's wait for a block or its acknowledgement on a fast console
CONFIRM_S = 2.0  # the PC's wait for the DUT's confirmation at a new rate (the firmware's own: 3 s)
MAX_BLOCK = 1024  # the firmware's FW_SERIAL_MAX_BLOCK
MAX_FILE = 16_777_216  # the firmware's FW_SERIAL_MAX_BYTES
# the thesis's tables 16 (Hub -> Charger: the SAME70 receives) and 17 (Charger -> Hub), kbit/s by block size
THESIS_KBPS = {
    "dut_rx": {8: 5.8, 16: 11.6, 32: 22.9, 64: 45.8, 96: 64.1, 128: 55.8, 160: 71.2, 256: 116.6},
    "dut_tx": {8: 2.1, 128: 33.7, 256: 67.5},
}
WAYS = {"dut_rx": "PC -> DUT", "dut_tx": "DUT -> PC"}
NO_RATE = "none: the console is a pseudo-terminal, which has no line rate (bytes per second only, no efficiency)"
NO_CONSOLE = "the DUT has no console the suite drives: no serial channel to measure"
NO_BAUD = (
    "the DUT's console is a pseudo-terminal of the bench (the virtual DUT's, QEMU's UART): it has no baud rate to sweep"
)
NEEDS = frozenset({"serial_transfer"})
METRICS = frozenset(
    {"kbps", "sd_kbps", "efficiency_pct", "bytes_per_s", "corrupted", "missing", "bad_blocks", "dut_kbps"}
)


def _one_size(text: str) -> tuple[object, ...]:
    if not text.isdigit() or not 1 <= int(text) <= MAX_FILE:
        raise ValueError(f"--serial-bytes takes one file size in bytes, 1..{MAX_FILE} (got {text!r})")
    return (int(text),)


BLOCKS = Axis(
    field="serial_blocks",
    points={"quick": THESIS_BLOCKS, "full": THESIS_BLOCKS},
    option="--serial-blocks",
    help="block sizes of the serial file transfer, e.g. 8,256",
    parse=int_list("--serial-blocks", 1, MAX_BLOCK),
    case=lambda v: f"b{v}",
    x=lambda v: float(v),  # type: ignore[arg-type]
    label="block size (bytes)",
    logx=True,
)
FILE_SIZE = Axis(
    field="serial_bytes",
    points={"quick": (THESIS_FILE,), "full": (THESIS_FILE,)},
    option="--serial-bytes",
    help=f"bytes of the serial transfer's file (default {THESIS_FILE}, the thesis's)",
    parse=_one_size,
    case=str,
    x=lambda v: float(v),  # type: ignore[arg-type]
    label="file size (bytes)",
)
BAUD_RATES = Axis(
    field="serial_bauds",
    points={"quick": BAUDS, "full": BAUDS},
    option="--serial-bauds",
    help="console baud rates the serial transfer sweeps on a board's serial port, e.g. 115200,921600",
    parse=int_list("--serial-bauds", 1200, 3_000_000),
    case=lambda v: f"baud{v}",
    x=lambda v: float(v),  # type: ignore[arg-type]
    label="baud rate (bit/s)",
    logx=True,
)


@dataclass(frozen=True)
class SerialPoint:
    direction: str  # dut_rx / dut_tx
    block: int
    baud: int | None  # a point of the baud sweep; None: the bench's own rate
    last: bool  # the last point of its group: the group's table and chart

    @property
    def case(self) -> str:
        return f"{self.direction}-b{self.block}" + (f"-baud{self.baud}" if self.baud else "")

    @property
    def group(self) -> str:
        """The case ids' common start of the point's group (block sizes, or baud rates)."""
        return f"{self.direction}-b{self.block}-baud" if self.baud else f"{self.direction}-b"


@register
class SerialThroughput:
    name = "serial throughput (a file through the console)"
    marker = "serial"
    marker_doc = (
        "the DUT's console as a data channel: a file in acknowledged blocks of 8 ... 256 bytes each way, "
        "checked byte for byte (throughput, nominal-rate efficiency, baud sweep)"
    )
    shapes = (ScenarioShape("serial", r"(dut_rx|dut_tx)-b\d+(-baud\d+)?", METRICS, "dut_rx-b8"),)
    default_limits: ClassVar = {"serial": {"default": {"max_corrupted": 0, "max_missing": 0}}}
    axes = (BLOCKS, FILE_SIZE, BAUD_RATES)

    def cases(self, bench: BenchFacts) -> list[Case]:
        """Every block size each way; on a port with a baud rate, the largest block at every rate.
        A DUT without a console, or whose console has no `serial` (a stock dialect), skips them
        with the reason; a DUT in the path runs them on its management console."""
        blocks = [int(b) for b in axis_points(BLOCKS, bench.profile)]  # type: ignore[call-overload]
        bauds = [int(b) for b in axis_points(BAUD_RATES, bench.profile)]  # type: ignore[call-overload]
        # the console's own reason first (the contract asks it of endpoints only; a DUT in the path too)
        skip = NO_CONSOLE if bench.dialect is None else bench.dialect.not_applicable(NEEDS)
        out = []
        for d in ("dut_rx", "dut_tx"):
            points = [SerialPoint(d, b, None, i == len(blocks) - 1) for i, b in enumerate(blocks)]
            out += [Case(self, f"serial/{p.case}", p, needs=NEEDS, skip=skip) for p in points]
            sweep = [SerialPoint(d, max(blocks), b, i == len(bauds) - 1) for i, b in enumerate(bauds)]
            no_rate = skip or (NO_BAUD if bench.console_baud is None else None)
            out += [Case(self, f"serial/{p.case}", p, needs=NEEDS, skip=no_rate) for p in sweep]
        return out

    def run(self, hil: HilContext, case: Case) -> None:
        run_serial(hil, case.point)  # type: ignore[arg-type]


def nominal_bytes_per_s(hil: HilContext, baud: int | None) -> float | None:
    """The console's nominal rate: its baud rate at 10 bits a byte; None on a pseudo-terminal."""
    if hil.dut.config.LOCAL:
        return None
    return (baud or hil.dut.config.console.baud) / BITS_PER_BYTE


def run_serial(hil: HilContext, point: SerialPoint) -> None:
    limits = hil.thresholds.limits("serial", point.case)  # none: an error before anything moves
    size = int(axis_points(FILE_SIZE, hil.profile)[0])  # type: ignore[call-overload]
    way = WAYS[point.direction]
    allure.dynamic.feature(SerialThroughput.name)
    allure.dynamic.story(f"serial {point.direction} ({way})" + (" by baud rate" if point.baud else ""))
    allure.dynamic.parameter("file", f"{size} B")
    allure.dynamic.parameter("block", f"{point.block} B")
    hil.dut.require_console()

    def measured() -> CaseRecord:  # at the point's baud rate, when it has one
        with console_rate(hil, point.baud):
            return measure_serial(hil, point, size)

    rec = measured()
    tty = "" if rec.theory else " (a pseudo-terminal)"
    allure.dynamic.title(
        f"serial/{point.case}: {size} B {way} in {point.block}-byte blocks: {headline(rec)}{tty}; "
        f"{criteria(rec.metrics(), limits)}"
    )
    if point.last:
        attach_group(hil, point, size)
    try:
        try:
            check(hil, "serial", [rec])
        except AssertionError as miss:  # a DUT on the bench PC: the majority of three trials (--confirm-misses)
            confirm_miss(hil, "serial", miss, measured)
    except (BenchFault, Regression):
        raise
    except AssertionError as miss:  # the DUT's: where the file went wrong, in words
        raise AssertionError(f"{miss}; {told}" if (told := _what_went_wrong(rec)) else str(miss)) from None
    if silent := [r for r in rec.extra["runs"] if r["status"] == "no final line"]:  # type: ignore[union-attr]
        raise DutError(f"the DUT gave no final line after the file: {silent[0]['said']}")  # type: ignore[index]


def _what_went_wrong(rec: CaseRecord) -> str:
    runs = rec.extra.get("runs", [])
    return "; ".join(f"run {i}: {r['said']}" for i, r in enumerate(runs, 1) if r.get("wrong"))  # type: ignore[union-attr,arg-type]


def measure_serial(hil: HilContext, point: SerialPoint, size: int) -> CaseRecord:
    """The file moved `repeat` times (seeds 1, 2, ...), every byte checked; every number recorded
    before any check."""
    start = time.time()
    results: list[TransferResult] = []
    nominal = nominal_bytes_per_s(hil, point.baud)
    # a block's wait: 1 s, or three times the block's time at a slow line rate
    wait_s = max(BLOCK_WAIT_S, 3.0 * (point.block + 1) / nominal) if nominal else BLOCK_WAIT_S
    with raw_port(hil.dut.embedded) as port:
        for i in range(1, hil.repeat + 1):
            spec = TransferSpec(point.direction, size, point.block, seed=i)  # type: ignore[arg-type]
            r = transfer(port, spec, alive=hil.dut.adapter.alive, block_timeout_s=wait_s)
            attach_text(f"run {i}: the console", "\n".join(r.transcript))
            results.append(r)
    kbps = [8.0 * r.bytes_per_s / 1000.0 for r in results]
    theory = 8.0 * nominal / 1000.0 if nominal else None
    rec = make_record("serial", point.case, hil.dut.config.name, summarize(kbps), theory, unit="kbit/s")
    dut_kbps = [8000.0 * r.received / us for r in results if (us := r.dut_elapsed_us)]
    rec.measured.update(
        bytes_per_s=round(summarize([r.bytes_per_s for r in results]).median, 1),
        corrupted=float(max(r.corrupted for r in results)),
        missing=float(max(r.missing for r in results)),
        bad_blocks=float(max(r.bad_blocks for r in results)),
    )
    if dut_kbps:
        rec.measured["dut_kbps"] = round(summarize(dut_kbps).median, 3)
    rec.extra.update(
        x=point.baud or point.block, direction=point.direction, file_bytes=size, block=point.block,
        baud=point.baud, nominal_bytes_per_s=nominal if nominal else NO_RATE,
        runs=[{"seed": r.spec.seed, "elapsed_s": round(r.elapsed_s, 6), "bytes_per_s": round(r.bytes_per_s, 1),
               "received": r.received, "corrupted": r.corrupted, "first_bad": r.first_bad, "missing": r.missing,
               "blocks": r.blocks, "status": r.status, "dut": r.final.fields if r.final is not None else None,
               "problem": r.problem, "wrong": not r.complete or r.corrupted > 0, "said": r.describe()}
              for r in results],
    )  # fmt: skip
    rec.traffic_s = round(sum(r.elapsed_s for r in results), 3)
    hil.recorder.record(rec, start, time.time())
    compare_with_baseline(hil, "serial", rec)
    attach_text("transfers", "\n".join(f"run {i}: {r.describe()}" for i, r in enumerate(results, 1)))
    return rec


@contextlib.contextmanager
def console_rate(hil: HilContext, baud: int | None) -> Iterator[None]:
    """The console at `baud` on both ends for a point of the baud sweep (the firmware's `serial
    baud`, confirmed at the new rate), the bench's own rate afterwards; nothing for other points."""
    if baud is None:
        yield
        return
    own = hil.dut.config.console.baud
    _switch(hil, baud)
    try:
        yield
    finally:
        if hil.dut.adapter.alive():
            _switch(hil, own)


def _switch(hil: HilContext, baud: int) -> None:
    """`serial baud RATE` answered at the old rate, the PC's port set to the new one, the DUT's
    confirmation read at it (the firmware goes back to the old rate unless confirmed in 3 s)."""
    console, _ = hil.dut.require_console()
    reply = console.command(f"serial baud {baud}", 10)
    if not reply.final.ok:
        if "no baud rate" in reply.final.reason or "unknown command" in reply.final.reason:
            raise NotApplicable(f"not applicable: the DUT's console cannot change its baud rate ({reply.final.text})")
        raise DutError(f"DUT refused `serial baud {baud}`: {reply.final.reason}")
    with raw_port(hil.dut.embedded) as port:
        before = port.baudrate  # type: ignore[attr-defined]  # pyserial's
        port.baudrate = baud  # type: ignore[attr-defined]
        port.write(b"serial baud confirm\n")
        deadline = time.monotonic() + CONFIRM_S
        seen = b""
        while b"action=baud_confirm" not in seen and time.monotonic() < deadline:
            seen += port.read(256)
        if b"action=baud_confirm" not in seen:
            port.baudrate = before  # type: ignore[attr-defined]  # where the firmware goes back to
            raise DutError(
                f"the DUT did not confirm baud rate {baud} at that rate within {CONFIRM_S:g} s ({seen[-120:]!r})"
            )


def attach_group(hil: HilContext, point: SerialPoint, size: int) -> None:
    """After a direction's last block size (or rate): its table, and its throughput against the
    block size (or the baud rate), against the nominal rate where there is one."""
    rows = [r for r in hil.recorder.latest("serial", point.group) if (point.baud is None) == ("baud" not in r.case)]
    rows.sort(key=lambda r: float(r.extra["x"]))  # type: ignore[arg-type]
    if not rows:
        return
    way, axis = WAYS[point.direction], BAUD_RATES if point.baud else BLOCKS
    thesis = THESIS_KBPS[point.direction] if point.baud is None else {}
    lines = [f"{point.direction} ({way}), a file of {size} B; nominal rate: "
             + (f"{rows[0].theory:.1f} kbit/s" if rows[0].theory and point.baud is None else
                "per baud rate" if point.baud else NO_RATE),
             f"{axis.label:>20s} {'time (s)':>9s} {'B/s':>10s} {'kbit/s':>10s} {'eff %':>6s} {'corrupted':>9s} "
             f"{'missing':>8s} {'DUT kbit/s':>10s} {'thesis kbit/s':>13s}"]  # fmt: skip
    for r in rows:
        x = int(float(r.extra["x"]))  # type: ignore[arg-type]
        runs = r.extra.get("runs", [])
        secs = sorted(float(run["elapsed_s"]) for run in runs)  # type: ignore[index,union-attr]
        eff = f"{r.efficiency_pct:6.1f}" if r.efficiency_pct is not None else f"{'-':>6s}"
        m = r.measured
        dut = f"{m['dut_kbps']:10.1f}" if "dut_kbps" in m else f"{'-':>10s}"
        ref = f"{thesis[x]:13.1f}" if x in thesis else f"{'-':>13s}"
        secs_median = secs[len(secs) // 2] if secs else 0.0
        lines.append(
            f"{x:>20d} {secs_median:9.3f} {m.get('bytes_per_s', 0.0):10.0f} {r.median:10.1f} {eff} "
            f"{m.get('corrupted', 0):9.0f} {m.get('missing', 0):8.0f} {dut} {ref}"
        )
    if thesis:
        lines.append("thesis: its SAME70 over USB CDC-ACM (tables 16 and 17), for reference; not a limit")
    name = f"serial {point.direction}" + (" by baud rate" if point.baud else "")
    attach_text(f"{name}: throughput against {axis.label}", "\n".join(lines))
    xs = [float(r.extra["x"]) for r in rows]  # type: ignore[arg-type]
    bounds = [(x, hil.thresholds.limits("serial", r.case).bounds()) for x, r in zip(xs, rows, strict=True)]
    attach_chart(
        f"{name}: throughput against {axis.label}",
        sweep_chart,
        f"serial/{point.direction} ({way}): a {size}-byte file, throughput against {axis.label}",
        axis.label,
        {f"{point.direction} ({way})": [(x, r.median) for x, r in zip(xs, rows, strict=True)]},
        theory=[(x, r.theory) for x, r in zip(xs, rows, strict=True) if r.theory],
        ylabel="throughput (kbit/s)",
        logx=True,
        theory_label="nominal rate (baud / 10 bits a byte)",
        threshold=limit_line(bounds, "min", "kbps"),
        min_efficiency=limit_line(bounds, "min", "efficiency_pct"),
    )
