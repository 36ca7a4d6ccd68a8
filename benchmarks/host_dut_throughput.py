"""Host DUT throughput benchmark on the virtual link. Prints figures; exits 1 when a target is missed.

  1. shaped 100BASE-TX (tbf, overhead 24), default build: TCP goodput in both directions against
     the theoretical 94.93 Mbit/s (target: >= --min-shaped-tcp, default 93);
  2. unshaped: the DUT window ladder (TCP_WND = TCP_SND_BUF = 2/4/8/16 x MSS), both directions -
     PC->DUT throughput should rise with the DUT's receive window;
  3. MSS 536 against MSS 1460, shaped, against their theoretical goodputs.

Run as root from the project root:  python -m benchmarks.host_dut_throughput [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.entry import parsed, parser, run_benchmark, verdict
from hil.console.serial_console import SerialConsole
from hil.errors import DutError
from hil.paths import PROJECT_ROOT, host_firmware
from hil.plumbing.host_dut import HostDutProcess, HostDutSpec
from hil.plumbing.netns import TAP, TbfShaping, VirtualTopology
from hil.stats import Summary, summarize
from hil.theory import efficiency_pct, tcp_goodput_mbps
from hil.tools.iperf2 import Iperf2ClientArgs, Iperf2Server, run_client

LINK_MBPS = 100.0
LADDER = [("wnd2", 2), ("wnd4", 4), ("default", 8), ("wnd16", 16)]


@dataclass
class Row:
    section: str
    config: str
    direction: str
    summary: Summary
    theory: float | None


class Bench:
    def __init__(self, topo: VirtualTopology, workdir: Path, duration_s: float, repeat: int) -> None:
        self.topo = topo
        self.workdir = workdir
        self.duration_s = duration_s
        self.repeat = repeat
        self.rows: list[Row] = []

    def _pc(self) -> list[str]:
        return self.topo.exec_prefix(self.topo.pc_ns)

    def tcp_once(self, console: SerialConsole, direction: str) -> float:
        """One TCP test; returns the receiver's goodput in Mbit/s."""
        cfg = self.topo.config
        if direction == "PC->DUT":
            console.send("iperf -s")
            console.wait_text(r"TCP server listening", timeout_s=5)
            args = Iperf2ClientArgs(host=cfg.dut_ip, duration_s=self.duration_s)
            run_client(self._pc(), args, timeout_s=self.duration_s + 20)
            final = console.wait_final("iperf", timeout_s=10).final
            if final is None or final.fields.get("status") != "ok":
                raise DutError(f"DUT server did not finish cleanly: {final}")
            return final.get_float("mbps")
        with Iperf2Server(self._pc(), udp=False, port=5001, log_path=self.workdir / "server.csv") as srv:
            reply = console.command(f"iperf -c {cfg.pc_ip} -t {self.duration_s:g}", timeout_s=self.duration_s + 20)
            if reply.final is None or reply.final.fields.get("status") != "ok":
                raise DutError(f"DUT client did not finish cleanly: {reply.output[-3:]}")
            return srv.wait_record(timeout_s=5).mbps

    def measure(self, section: str, config: str, theory: float | None) -> None:
        spec = HostDutSpec(host_firmware(config), self.topo.dut_ns, TAP, self.topo.config.dut_ip)
        with HostDutProcess(spec, self.workdir / config) as proc, SerialConsole(str(proc.console_path)) as console:
            console.identify(10)
            for direction in ("PC->DUT", "DUT->PC"):
                values = [self.tcp_once(console, direction) for _ in range(self.repeat)]
                s = summarize(values)
                row = Row(section, config, direction, s, theory)
                self.rows.append(row)
                eff = f"  {efficiency_pct(s.median, theory):5.1f} % of {theory:.2f}" if theory else ""
                print(f"  {config:8s} {direction:8s} {s.format('Mbit/s')}{eff}", flush=True)

    def median(self, section: str, config: str, direction: str) -> float:
        return next(
            r.summary.median for r in self.rows if (r.section, r.config, r.direction) == (section, config, direction)
        )


def run(args: argparse.Namespace) -> int:
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="hil-bench-") as tmp, VirtualTopology() as topo:
        bench = Bench(topo, Path(tmp), args.duration, args.repeat)
        theory_1460 = tcp_goodput_mbps(LINK_MBPS, 1460)
        theory_536 = tcp_goodput_mbps(LINK_MBPS, 536)

        topo.shape(TbfShaping(rate_mbit=LINK_MBPS))
        print(f"[1] shaped {LINK_MBPS:g} Mbit/s (tbf, overhead 24), TCP goodput, default build "
              f"(theory {theory_1460:.2f} Mbit/s)", flush=True)  # fmt: skip
        bench.measure("shaped", "default", theory_1460)
        for direction in ("PC->DUT", "DUT->PC"):
            med = bench.median("shaped", "default", direction)
            if med < args.min_shaped_tcp:
                failures.append(f"shaped TCP {direction} median {med:.2f} < target {args.min_shaped_tcp:g} Mbit/s")

        print(f"[3] MSS 536 against 1460, shaped (theory {theory_536:.2f} / {theory_1460:.2f} Mbit/s)", flush=True)
        bench.measure("shaped-mss", "mss536", theory_536)

        topo.unshape()
        print("[2] unshaped, DUT window ladder (TCP_WND = TCP_SND_BUF = k x MSS)", flush=True)
        for config, _k in LADDER:
            bench.measure("ladder", config, None)
        ladder = [bench.median("ladder", c, "PC->DUT") for c, _ in LADDER]
        rising = all(b > a for a, b in itertools.pairwise(ladder))
        steps = " < ".join(f"{k}xMSS {v:.0f}" for (_, k), v in zip(LADDER, ladder, strict=True))
        print(f"    PC->DUT by DUT window: {steps} Mbit/s -> {'rising' if rising else 'NOT rising'}")
        if not rising and args.strict_ladder:
            failures.append("PC->DUT throughput does not rise with the DUT's TCP window")

        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps([asdict(r) for r in bench.rows], indent=2))
            print(f"figures written to {args.json}")
    return verdict(failures, args.figures_only)


def main() -> int:
    p = parser(__doc__)
    p.add_argument("--min-shaped-tcp", type=float, default=93.0, help="target for shaped TCP goodput, Mbit/s")
    p.add_argument("--strict-ladder", action="store_true", help="fail when the window ladder does not rise")
    p.add_argument("--json", type=Path, default=PROJECT_ROOT / "results" / "benchmarks" / "host_dut_throughput.json")
    return run_benchmark(run, parsed(p))


if __name__ == "__main__":
    sys.exit(main())
