"""Bidirectional TCP and UDP (thesis: iperf3 --bidir; 100 MB down 42.4 / up 76.8 Mbit/s): both
directions at once, numbers per direction. A DUT that ends the traffic runs an iperf server and
client together; through a DUT in the path it is one iperf 3 --bidir test between the PC and the
peer, and the full profile adds the thesis's TCP by data size (-n 100 MB / 500 MB:
`bidir/tcp-n100M`) and by write length (-l 64 ... 1448: `bidir/tcp-l64`). UDP offers 90 % of the
theoretical goodput each way."""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING

import allure

from hil.directions import direction_name
from hil.results.dut_side import dut_side
from hil.results.recorder import CaseRecord, make_record
from hil.scenarios.contract import BUILDS, BenchFacts, Case, register
from hil.scenarios.metrics import DIRECTION, IPERF3, SIZE, THROUGHPUT, UDP, ScenarioShape
from hil.scenarios.offered import BIDIR_UDP_OF_THEORY
from hil.scenarios.sweep import add_tcp_figures, attach_text, check, confirm_miss
from hil.scenarios.tcp_watch import DIRECTIONS, TcpWatch, segment_of
from hil.stats import summarize
from hil.theory import tcp_goodput_mbps, udp_goodput_mbps
from hil.tools.sizes import parse_iperf_size
from hil.traffic.roles import BidirResult

if TYPE_CHECKING:
    from hil.session import HilContext

UDP_LEN = 1470
AMOUNT_SHARE_OF_THEORY = 0.5  # a -n test's expected length: its bytes at half the link's goodput


@dataclass(frozen=True)
class BidirPoint:
    name: str  # the case id's part, e.g. tcp-n100M
    proto: str
    amount: str | None = None  # iperf -n
    write_length: int | None = None  # iperf -l
    build: str | None = None  # the build configuration flashed for the case (None: the bench file's)


@register
class Bidirectional:
    name = "bidirectional"
    marker = "bidir"
    marker_doc = "both directions at once"
    shapes = (
        ScenarioShape("bidir", rf"(?:tcp|udp)(?:-n{SIZE}|-l\d+)?-{DIRECTION}", THROUGHPUT | UDP | IPERF3, "tcp-dut_tx"),
    )

    def cases(self, bench: BenchFacts) -> list[Case]:
        """`bidir/tcp`, `bidir/udp`; through a DUT in the path the profile's data sizes and write
        lengths too (`bidir/tcp-n100M`, `bidir/tcp-l64`)."""
        build = bench.full_duplex_build
        points = [BidirPoint("tcp", "tcp", build=build), BidirPoint("udp", "udp", build=build)]
        if bench.in_path:
            points += [BidirPoint(f"tcp-n{a}", "tcp", amount=a) for a in bench.profile.bidir_amounts]
            points += [BidirPoint(f"tcp-l{n}", "tcp", write_length=n) for n in bench.profile.bidir_lengths]
        needs = frozenset({"concurrent"}) | (BUILDS if build else frozenset())
        return [Case(self, f"bidir/{p.name}", p, needs=needs, own_builds=p.build is not None) for p in points]

    def record_keys(self, case: Case, bench: BenchFacts) -> list[tuple[str, str]]:
        name = case.point.name  # type: ignore[attr-defined]
        return [("bidir", f"{name}-{direction_name(d, bench.in_path)}") for d in ("dut_tx", "dut_rx")]

    def run(self, hil: HilContext, case: Case) -> None:
        run_bidirectional(hil, case.point)  # type: ignore[arg-type]


def run_bidirectional(hil: HilContext, point: BidirPoint) -> None:
    name, proto, amount, write_length = point.name, point.proto, point.amount, point.write_length
    allure.dynamic.feature("bidirectional")
    allure.dynamic.story(f"bidir {proto.upper()}")
    what = f" -n {amount}" if amount else (f" -l {write_length}" if write_length else "")
    title = f"bidir/{name}: {proto.upper()}{what} both directions at once"
    if point.build is not None:  # the kind's full-duplex build (hil.config.sections FULL_DUPLEX_BUILD)
        if hil.dut.adapter.current_config != point.build:
            hil.flash_config(point.build)
        title += f" (build {point.build})"
    allure.dynamic.title(title)
    scenario = "bidir"
    for direction in ("dut_tx", "dut_rx"):  # a case without limits is an error before any traffic
        hil.thresholds.limits(scenario, f"{name}-{hil.direction(direction)}")
    theory = tcp_goodput_mbps(hil.link_mbit, 1460) if proto == "tcp" else udp_goodput_mbps(hil.link_mbit, UDP_LEN)
    rate = round(theory * BIDIR_UDP_OF_THEORY, 3) if proto == "udp" else None
    duration = hil.duration_s
    if amount:
        duration = parse_iperf_size(amount) * 8 / (AMOUNT_SHARE_OF_THEORY * theory * 1e6)
    tcp_texts: dict[str, str] = {}

    def trial() -> list[CaseRecord]:
        """Both directions at once, `hil.repeat` times, each direction's record written."""
        start = time.time()
        traffic_s = 0.0
        runs: list[BidirResult] = []
        tcp = TcpWatch(hil, DIRECTIONS) if proto == "tcp" else None
        if tcp is not None:
            tcp.start()
        sides = ("pc", "peer") if hil.in_path else ("pc",)
        window = hil.wire.window(sides) if hil.wire is not None and tcp is not None else None
        for i in range(1, hil.repeat + 1):
            with allure.step(f"run {i}: {proto}{what} both directions" + ("" if amount else f" for {duration:g} s")):
                length = UDP_LEN if proto == "udp" else write_length
                began = time.monotonic()
                with tcp.during(duration) if tcp is not None else nullcontext():
                    r = hil.far_end.bidir(proto, duration, rate, hil.pc_side, length, amount)  # type: ignore[arg-type]
                traffic_s += duration if not amount else time.monotonic() - began  # a -n test lasts what it lasts
                for d in (r.dut_tx, r.dut_rx):
                    for evidence, text in d.raw.items():
                        attach_text(f"run {i} {hil.direction(d.spec.direction)}: {evidence}", text)
                runs.append(r)
        seen = window.close() if window is not None else None
        dut_metrics = (dut_side(seen.dut_before, seen.dut_after, traffic_s, tcp=not hil.in_path).metrics
                       if seen is not None and seen.dut_before and seen.dut_after else {})  # fmt: skip
        records: list[CaseRecord] = []
        for direction in DIRECTIONS:
            results = [getattr(r, direction) for r in runs]
            rec = make_record(scenario, f"{name}-{hil.direction(direction)}", hil.dut.config.name,
                              summarize([x.receiver_mbps for x in results]), theory)  # fmt: skip
            if proto == "udp":
                rec.loss_pct = max(x.loss_pct or 0.0 for x in results)
                rec.generator_limited = any(x.generator_limited for x in results)
                rec.extra["offered_mbps"] = rate
                if any(x.pc_receive_drops for x in results):  # left out of the loss: the DUT delivered them
                    rec.extra["pc_receive_drops"] = [x.pc_receive_drops for x in results]
            rec.extra["sender_mbps"] = [round(x.sender_mbps, 3) for x in results]
            rec.extra["sender"] = "dut" if any(x.sender_is_dut for x in results) else "bench"
            if amount:
                rec.extra["amount"] = amount
            rec.traffic_s = round(traffic_s, 3) if direction == "dut_tx" else 0.0  # both ran at once
            if tcp is not None:
                segment = segment_of(results, seen, hil, direction)
                add_tcp_figures(rec, tcp.figures(direction, rec.median, theory, results, segment, dut_metrics, seen))
            hil.recorder.record(rec, start, time.time())
            records.append(rec)
        tcp_texts.update(tcp.texts if tcp is not None else {})
        return records

    records = trial()
    for text_name, text in tcp_texts.items():
        attach_text(text_name, text)
    attach_text(
        "per direction",
        "\n".join(f"{r.case}: median {r.median:.2f} Mbit/s ({r.efficiency_pct:.1f} % of {theory:.2f})" for r in records)
        + f"\nsum: {sum(r.median for r in records):.2f} Mbit/s",
    )
    try:
        check(hil, scenario, records, title=title)
    except AssertionError as miss:  # on a DUT that shares the bench PC: measured again (--confirm-misses)
        confirm_miss(hil, scenario, miss, trial)
