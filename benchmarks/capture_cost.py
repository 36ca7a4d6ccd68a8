"""What the per-case capture costs: TCP and UDP goodput (UDP offered above the link), both
directions, on the shaped 100 Mbit/s virtual link with the host DUT's default build, with and
without the capture the suite runs on the PC's interface (hil.wire.capture: tcpdump, headers
only, its cap above the test's packets, read while it is written: hil.wire.follow), interleaved so
the host's drift hits both alike; then the time each capture's summary took after the traffic.
Prints figures; exits 1 when the capture costs more than --max-cost-pct of the goodput in any case
(median against median).

Run as root from the project root:  python -m benchmarks.capture_cost [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.entry import parsed, parser, run_benchmark, verdict
from hil.console.dialects.registry import make_driver
from hil.console.serial_console import SerialConsole
from hil.paths import host_firmware
from hil.plumbing import netns
from hil.plumbing.host_dut import HostDutProcess, HostDutSpec
from hil.plumbing.netns import TAP, TbfShaping, VirtualTopology
from hil.stats import summarize
from hil.traffic.far_end import ConsoleFarEnd
from hil.traffic.roles import PcSide, TrafficSpec, run_traffic
from hil.wire.capture import Capture
from hil.wire.follow import CaptureFollower
from hil.wire.pcap_summary import summarize_pcap

LINK_MBPS = 100.0
# above the link's 95.7 Mbit/s of 1470-byte datagrams: the receiver's rate is the link's, so what
# the capture costs shows (offered below it, the received rate would be the offer either way)
UDP_OFFER_MBPS = 120.0
CASES = [("tcp", "dut_rx"), ("tcp", "dut_tx"), ("udp", "dut_rx"), ("udp", "dut_tx")]


def run(args: argparse.Namespace) -> int:
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="hil-capture-cost-") as tmp, VirtualTopology() as topo:
        work = Path(tmp)
        topo.shape(TbfShaping(rate_mbit=LINK_MBPS))
        pc_prefix = topo.exec_prefix(topo.pc_ns)
        spec = HostDutSpec(host_firmware("default"), topo.dut_ns, TAP, topo.config.dut_ip)
        with HostDutProcess(spec, work / "dut") as proc, SerialConsole(str(proc.console_path)) as console:
            console.identify(10)
            far = ConsoleFarEnd(make_driver("hil-fw", console), "DUT", topo.config.dut_ip)
            print(f"capture cost on the shaped {LINK_MBPS:g} Mbit/s link, {args.repeat} x {args.duration:g} s per "
                  "case and condition (interleaved)", flush=True)  # fmt: skip
            print(f"{'case':14s} {'without':>9s} {'with':>9s} {'cost %':>7s} {'packets':>8s} {'summary s':>9s}")
            for proto, direction in CASES:
                rate = UDP_OFFER_MBPS if proto == "udp" else None
                traffic = TrafficSpec(proto, direction, args.duration, rate_mbps=rate, length=1470 if rate else None)  # type: ignore[arg-type]
                plain: list[float] = []
                captured: list[float] = []
                packets: list[int] = []
                summary_s: list[float] = []
                for i in range(args.repeat):
                    (work / "pc").mkdir(exist_ok=True)
                    pc = PcSide(pc_prefix, topo.config.pc_ip, work / "pc")
                    plain.append(run_traffic(traffic, pc, far, far.generator).receiver_mbps)
                    cap = Capture(pc_prefix, netns.PC_IF, work / f"{proto}-{direction}-{i}.pcap", args.capture_packets)
                    cap.start()
                    follower = CaptureFollower(cap.path)  # read while written, as a case's capture is
                    follower.start()
                    try:
                        captured.append(run_traffic(traffic, pc, far, far.generator).receiver_mbps)
                    finally:
                        result = cap.stop()
                    t0 = time.monotonic()
                    if follower.finish() is None:  # not followed: read after, as the suite then does
                        summarize_pcap(result.path)
                    summary_s.append(time.monotonic() - t0)
                    packets.append(result.packets)
                    cap.remove()
                without, with_ = summarize(plain).median, summarize(captured).median
                cost = 100.0 * (without - with_) / without if without else 0.0
                name = f"{proto} {direction}"
                print(f"{name:14s} {without:9.2f} {with_:9.2f} {cost:7.2f} {max(packets):8d} "
                      f"{max(summary_s):9.2f}", flush=True)  # fmt: skip
                if cost > args.max_cost_pct:
                    failures.append(f"{name}: the capture cost {cost:.2f} % > {args.max_cost_pct:g} %")
    return verdict(failures, args.figures_only)


def main() -> int:
    p = parser(__doc__)
    p.add_argument("--max-cost-pct", type=float, default=2.0, help="the capture's largest cost (default 2 %%)")
    # above any test's packets (5 s of TCP: about 60,000): a capture that stopped at its cap would cost less
    p.add_argument("--capture-packets", type=int, default=1_000_000, help="packet cap per capture (default 1,000,000)")
    args = parsed(p)
    if args.capture_packets < 1:
        p.error("--capture-packets must be >= 1")
    return run_benchmark(run, args)


if __name__ == "__main__":
    sys.exit(main())
