"""Stack-configuration studies (seed 001: lwIP's defaults gave 1-2 Mbit/s, its tuned options 4-5x
more; the ESP32 report, seed 000): ladders of firmware builds that differ in the lwIP options the
seeds turn, each step measured where the construction fixes the rate, each study checked for the
trend it must show, the configuration differences between its builds written out as the DUT
reports them.

- `stack`: lwIP's own defaults (`stock`: opt.h's TCP_MSS, TCP_WND, TCP_SND_BUF, MEM_SIZE,
  MEMP_NUM_PBUF, MEMP_NUM_TCP_SEG, PBUF_POOL_SIZE) against the project's `default` and the lwIP
  study's values (`tuned`), PC->DUT: the factor tuned / stock is printed.
- `pools`: PBUF_POOL_SIZE below and above one window (`pool<k>`, then `default`), PC->DUT.
- `sndbuf`: TCP_SND_BUF (`sndbuf<k>` and `default`), DUT->PC.

The builds are the kind's own (its build system's presets, the ESP32's sdkconfig.ci.<config>);
a study runs with the builds of its names the bench declares. Each step is measured through the
firmware's link delay line (hil.session.HilContext.delayed_ingress): every frame the DUT
receives is held the profile's `window_dut_delay_ms`, so PC->DUT moves one TCP_WND per round
trip and DUT->PC one TCP_SND_BUF (the PC's ACKs are held), far below the link rate, the same on
any machine: `stack` and `sndbuf` steps are checked against that expected value. A pool smaller
than the window loses frames, so of `pools` only the default build (its pool holds the window) is
checked against it, the smaller pools shown against it, the trend the study's check. A firmware without the
delay line (an ESP32 on ESP-IDF's lwIP) runs the studies on the bench's own link with the trend
check alone."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import allure

from hil.checks import BELOW_THRESHOLD, criteria, trend_violations
from hil.report.background_charts import attach_chart
from hil.results.recorder import CaseRecord
from hil.scenarios.charts import dut_side_chart, has_dut_side, sweep_chart
from hil.scenarios.contract import BUILDS, BenchFacts, Case, no_builds_case, register
from hil.scenarios.metrics import CONFIG, IPERF3, THROUGHPUT, ScenarioShape
from hil.scenarios.sweep import Point, attach_text, check, confirm_miss, measure
from hil.scenarios.tcp_watch import DEFAULT_SEGMENT
from hil.session import NoDelayLine
from hil.theory import acked_per_round_trip, tcp_goodput_mbps, window_limited_goodput_mbps
from hil.traffic.roles import TrafficSpec

if TYPE_CHECKING:
    from hil.session import HilContext

# what the DUT reports of its stack (its identity line), in the order the tables show
STACK_FIELDS = ("tcp_mss", "tcp_wnd", "tcp_snd_buf", "mem_size", "memp_num_pbuf", "memp_num_tcp_seg", "pbuf_pool_size")
Expected = Literal["tcp_wnd", "tcp_snd_buf"]


def _numbered(prefix: str) -> Callable[[str], float | None]:
    """A config `<prefix><k>` -> k; `default` -> None (placed by the study)."""
    pattern = re.compile(rf"{prefix}(\d+)")

    def key(config: str) -> float | None:
        m = pattern.fullmatch(config)
        return float(m.group(1)) if m else None

    return key


@dataclass(frozen=True)
class Study:
    scenario: str
    title: str
    direction: Literal["dut_rx", "dut_tx"]
    what: str  # what the study varies, for the chart's axis and the report
    step: Callable[[str], float | None]  # a member config's place on the ladder (None: not a member)
    # where `default` sits on the ladder, from its build settings (its value of the varied option)
    default_at: Callable[[dict[str, str]], float]
    expected: Expected | None  # the identity field the delay line makes the rate of (None: trend only)

    def steps(self, builds: dict[str, dict[str, str]]) -> list[str]:
        """The bench's builds of this study in ladder order, `default` among them; none unless
        at least one build of the study's own names is there."""
        own = [(k, c) for c in builds if (k := self.step(c)) is not None]
        if not own:
            return []
        if "default" in builds:
            own.append((self.default_at(builds["default"]), "default"))
        return [c for _, c in sorted(own)]


def _snd_buf_mss(settings: dict[str, str]) -> float:
    """A build's TCP_SND_BUF in segments: the presets' FW_TCP_SND_BUF_MSS (else the window's, as
    fw_config.h does), an ESP-IDF build's bytes over its MSS (ESP-IDF's defaults 5760 / 1440)."""
    if "FW_TCP_SND_BUF_MSS" in settings or "FW_TCP_WND_MSS" in settings:
        return float(settings.get("FW_TCP_SND_BUF_MSS") or settings["FW_TCP_WND_MSS"])
    snd = int(settings.get("CONFIG_LWIP_TCP_SND_BUF_DEFAULT", "5760"))
    return round(snd / int(settings.get("CONFIG_LWIP_TCP_MSS", "1440")))


_STACK_ORDER = {"stock": 0.0, "tuned": 2.0}
STUDIES = (
    Study("stack", "stock lwIP options vs the project's default vs the lwIP study's tuned values", "dut_rx",
          "build (stock -> default -> tuned)", _STACK_ORDER.get, lambda s: 1.0, "tcp_wnd"),
    Study("pools", "PBUF_POOL_SIZE (receive buffers) below and above one TCP window", "dut_rx",
          "PBUF_POOL_SIZE", _numbered("pool"), lambda s: float("inf"), "tcp_wnd"),
    Study("sndbuf", "TCP_SND_BUF (the sender's buffer) with the window unchanged", "dut_tx",
          "TCP_SND_BUF (x MSS)", _numbered("sndbuf"), _snd_buf_mss, "tcp_snd_buf"),
)  # fmt: skip


@dataclass(frozen=True)
class StudyStep:
    study: Study
    config: str
    index: int  # its place on the ladder (0 first)
    last: bool
    build: tuple[tuple[str, str], ...]  # the build system's settings of this config


@register
class StackStudies:
    name = "stack-configuration studies (DUT builds)"
    marker = "study"
    marker_doc = "stack-configuration studies: stock vs tuned lwIP, pool sizes, TCP_SND_BUF (DUT builds)"
    shapes = tuple(
        ScenarioShape(s.scenario, rf"{s.direction}-{CONFIG}", THROUGHPUT | IPERF3, f"{s.direction}-default", trend=True)
        for s in STUDIES
    )
    # the expected value's tolerance where the construction gives one (as the window ladder's); a pool
    # below the window loses frames, so its steps are shown against the window-limited rate without a
    # criterion (the study's trend is the check), and the default build, whose pool holds the
    # window, must reach that rate
    default_limits: ClassVar = {
        "stack": {"default": {"min_efficiency_pct": 90, "max_efficiency_pct": 105}},
        "sndbuf": {"default": {"min_efficiency_pct": 90, "max_efficiency_pct": 105}},
        "pools": {
            "dut_rx-default": {"min_efficiency_pct": 90, "max_efficiency_pct": 105},
            "default": {"no_criterion": "a pool below the window loses frames: the study's trend is the check"},
        },
    }

    def cases(self, bench: BenchFacts) -> list[Case]:
        """One case per build of each study the bench declares builds for (`stack/dut_rx-stock`
        ...); a study without builds: one case saying so."""
        settings = dict(bench.builds)
        out: list[Case] = []
        for study in STUDIES:
            steps = study.steps({c: dict(v) for c, v in settings.items()})
            if len(steps) < 2:
                out.append(no_builds_case(self, study.scenario, bench, f"{study.scenario} study"))
                continue
            for i, config in enumerate(steps):
                step = StudyStep(study, config, i, i == len(steps) - 1, settings[config])
                out.append(Case(self, f"{study.scenario}/{study.direction}-{config}", step, needs=BUILDS,
                                topology="endpoint", own_builds=True))  # fmt: skip
        return out

    def run(self, hil: HilContext, case: Case) -> None:
        study_step(hil, case.point)  # type: ignore[arg-type]


def study_step(hil: HilContext, step: StudyStep) -> None:
    study, config = step.study, step.config
    scenario, case = study.scenario, f"{study.direction}-{config}"
    delay_ms = hil.profile.window_dut_delay_ms
    allure.dynamic.feature("stack-configuration studies (DUT builds)")
    allure.dynamic.story(f"{scenario}: {study.title}")
    limits = hil.thresholds.limits(scenario, case)  # no threshold: an error before any traffic
    identity = hil.flash_config(config)
    stack = {k: identity.get_int(k) for k in STACK_FIELDS if identity.fields.get(k) is not None}
    build = " ".join(f"{k}={v}" for k, v in step.build if k not in ("FW_TARGET", "FW_VARIANT")) or "as the defaults"
    attach_text(f"{config}: the build and what the DUT reports", f"build: {build}\nDUT: {_fields(stack)}\n")
    spec = TrafficSpec("tcp", study.direction, hil.duration_s)

    def trial() -> CaseRecord:
        extra: dict[str, object] = {"config": config, "stack": stack, "build": dict(step.build)}
        try:
            with hil.delayed_ingress(delay_ms) as rtt_ms:
                expected = _expected(hil, study, stack, delay_ms)
                extra |= {"delay_ms": delay_ms, "ping_rtt_ms": round(rtt_ms, 3)}
                ideal = tcp_goodput_mbps(hil.link_mbit, stack.get("tcp_mss") or DEFAULT_SEGMENT)
                return measure(hil, scenario, Point(case, spec, expected, step.index, extra, ideal_mbps=ideal))
        except NoDelayLine as exc:
            attach_text("delay line", f"{exc}: the study runs on the bench's own link with its trend check")
            return measure(hil, scenario, Point(case, spec, None, step.index, extra))

    rec = trial()
    allure.dynamic.title(
        f"{scenario}/{case}: {_fields(stack, short=True)}: {_rate(rec)}; {criteria(rec.metrics(), limits)}"
    )
    found = _finish_study(hil, study) if step.last else []
    try:
        check(hil, scenario, [rec])
    except AssertionError as miss:  # on a DUT that shares the bench PC: measured again (--confirm-misses)
        confirm_miss(hil, scenario, miss, trial)
    assert not found, f"{BELOW_THRESHOLD}: {scenario}: " + "; ".join(found)


def _expected(hil: HilContext, study: Study, stack: dict[str, int], delay_ms: int) -> float | None:
    """The rate the delay line makes by construction: one TCP_WND (PC->DUT: what the DUT's lwIP
    acknowledges of it within the round trip, hil.theory.acked_per_round_trip) or one TCP_SND_BUF
    (DUT->PC) per round trip; None for a study without one."""
    if study.expected is None or study.expected not in stack or "tcp_mss" not in stack:
        return None
    window, mss = stack[study.expected], stack["tcp_mss"]
    if study.direction == "dut_rx":  # the DUT's lwIP acknowledges every second segment
        window = acked_per_round_trip(window, mss)
    return window_limited_goodput_mbps(window, delay_ms, hil.link_mbit, mss)


def _rate(rec: CaseRecord) -> str:
    if rec.theory and rec.efficiency_pct is not None:
        return f"{rec.median:.3f} Mbit/s = {rec.efficiency_pct:.1f} % of the expected {rec.theory:.3f}"
    return f"{rec.median:.3f} Mbit/s"


def _fields(stack: dict[str, int], short: bool = False) -> str:
    names = {"tcp_mss": "MSS", "tcp_wnd": "WND", "tcp_snd_buf": "SND_BUF", "mem_size": "MEM",
             "memp_num_pbuf": "PBUF", "memp_num_tcp_seg": "TCP_SEG", "pbuf_pool_size": "POOL"}  # fmt: skip
    return " ".join(f"{names[k] if short else k}={v}" for k, v in stack.items())


def study_records(hil: HilContext, study: Study) -> list[CaseRecord]:
    """The study's steps measured in this run (the latest of each), in ladder order."""
    return sorted(hil.recorder.latest(study.scenario), key=lambda r: float(r.extra.get("x", 0)))  # type: ignore[arg-type]


def differences(records: Sequence[CaseRecord]) -> str:
    """The study's table: each build's stack as the DUT reports it, a setting shown only where it
    differs from the default build's (or the first step's), with what each step measured."""
    stacks = [r.extra.get("stack", {}) for r in records]
    ref_i = next((i for i, r in enumerate(records) if r.extra.get("config") == "default"), 0)
    ref: dict[str, int] = stacks[ref_i] if stacks else {}  # type: ignore[assignment]
    lines = [f"reference: {records[ref_i].extra.get('config')} ({_fields(ref)})" if records else "", ""]
    lines.append(f"{'build':<10s} {'differs from the reference':<58s} {'Mbit/s':>8s} {'expected':>9s} "
                 f"{'DUT CPU':>8s} {'resent':>7s} {'pool free':>9s}")  # fmt: skip
    for r, stack in zip(records, stacks, strict=True):
        diff = [f"{k}={v}" for k, v in stack.items() if ref.get(k) != v]  # type: ignore[union-attr]
        m = r.measured
        exp = f"{r.theory:9.3f}" if r.theory else f"{'-':>9s}"
        cpu = f"{m['dut_cpu_pct']:7.1f}%" if "dut_cpu_pct" in m else f"{'-':>8s}"
        resent = f"{m['dut_tcp_retrans']:7.0f}" if "dut_tcp_retrans" in m else f"{'-':>7s}"
        pool = f"{m['pool_free']:9.0f}" if "pool_free" in m else f"{'-':>9s}"
        lines.append(f"{r.extra.get('config')!s:<10s} {' '.join(diff) or '(the reference)':<58s} {r.median:8.3f} "
                     f"{exp} {cpu} {resent} {pool}")  # fmt: skip
    return "\n".join(lines) + "\n"


def _finish_study(hil: HilContext, study: Study) -> list[str]:
    """On the study's last step: its table (the configuration differences written out), its
    chart, the DUT's side beside it, the stock -> tuned factor, and the trend check's violations."""
    records = study_records(hil, study)
    if not records:
        return []
    text = differences(records)
    factor = stock_to_tuned(records)
    if factor is not None:
        text += f"\ntuned / stock: {factor:.2f}x ({study.direction})\n"
        allure.dynamic.parameter("tuned / stock", f"{factor:.2f}x")
    attach_text(f"{study.scenario} study: the builds and what they measured", text)
    labels = [str(r.extra.get("config")) for r in records]
    xs = [float(i) for i in range(len(records))]
    axis = f"{study.what}, build"
    ticks = list(zip(xs, labels, strict=True))
    attach_chart(
        f"{study.scenario} study: goodput per build",
        sweep_chart,
        f"{study.scenario} study, {study.direction}: {study.title}",
        axis,
        {study.direction: list(zip(xs, [r.median for r in records], strict=True))},
        theory=[(x, r.theory) for x, r in zip(xs, records, strict=True) if r.theory],
        theory_label="expected: one buffer per round trip",
        xticks=ticks,
    )
    side = list(zip(xs, [r.measured for r in records], strict=True))
    if has_dut_side(side):
        attach_chart(f"{study.scenario} study: the DUT's CPU, segments and pools per build", dut_side_chart,
                     f"{study.scenario} study: the DUT's side", axis, side, xticks=ticks)  # fmt: skip
    trend = hil.thresholds.trend(study.scenario)
    found = trend_violations([(r.case, r.median) for r in records], trend)
    steps = " -> ".join(f"{r.extra.get('config')}: {r.median:.3f}" for r in records)
    attach_text(f"{study.scenario} study: trend", f"{steps} Mbit/s\nlimits: {trend.model_dump()}\n"
                + ("\n".join(found) or "passed"))  # fmt: skip
    return [f"the {study.scenario} study's trend: {v}" for v in found]


def stock_to_tuned(records: Sequence[CaseRecord]) -> float | None:
    """The tuned build's median over the stock build's (None unless both were measured)."""
    by = {r.extra.get("config"): r.median for r in records}
    stock, tuned = by.get("stock"), by.get("tuned")
    return tuned / stock if stock and tuned is not None else None
