"""Calibrates a real bench's frame tester (`./suite calibrate-tester`): with the PC's bench NIC
and its second NIC joined by a cable, no DUT between them, the tester's ceiling at each frame size
(the lower of two trials at the line rate) into the file the bench file names (`tester:
{ceilings: FILE}`). The RFC 2544 family reads it before it measures the DUT and reports a
throughput within 3 % of a ceiling below the line rate as the tester's.

    python -m hil.traffic.calibrate_tester --bench FILE [--dut NAME] [--frame-sizes 64,...]
                                           [--tester-slow-ns NS] [--seconds S]

Exit codes: 0 written; 4 the bench file or an option (one line naming it); 75 the bench (a NIC
without its address, the tester not built, no root).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hil.config.errors import ConfigError
from hil.dut.bench_file import load_bench
from hil.errors import BenchError
from hil.exit_codes import ExitCode
from hil.plumbing.netns import require_root
from hil.plumbing.two_nics import two_nic_ends
from hil.traffic.frame_tester import RFC2544_FRAME_SIZES, require_tester
from hil.traffic.tester_ceilings import ceilings_table, measure_ceiling, save_ceilings


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--frame-sizes takes comma-separated integers, not {text!r}") from None
    if not sizes or any(not 64 <= s <= 1518 for s in sizes):
        raise argparse.ArgumentTypeError(f"--frame-sizes values must lie in 64..1518 (got {text})")
    return sorted(set(sizes))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """A bad option: one line and the suite's usage exit code (argparse's own is 2: interrupted)."""
        print(f"calibrate-tester: {message} (./suite calibrate-tester --help lists the options)", file=sys.stderr)
        raise SystemExit(int(ExitCode.USAGE_ERROR))


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="./suite calibrate-tester", description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", type=Path, required=True, help="the bench file (its DUT's `tester:` and `peer.netns`)")
    ap.add_argument("--dut", default=None, help="the DUT of the bench file (default: its first)")
    ap.add_argument("--frame-sizes", type=_sizes, default=list(RFC2544_FRAME_SIZES), help="default: RFC 2544's seven")
    ap.add_argument("--tester-slow-ns", type=int, default=0, help="the generator slowed by NS per frame (its check)")
    ap.add_argument("--seconds", type=float, default=5.0, help="each trial's length (default 5)")
    return ap


def calibrate(args: argparse.Namespace) -> Path:
    bench = load_bench(args.bench)
    names = [d.name for d in bench.duts]
    if args.dut is not None and args.dut not in names:
        raise ConfigError(f"{args.bench}: no DUT named {args.dut!r} (bench has: {', '.join(names)})")
    dut = next(d for d in bench.duts if args.dut in (None, d.name))
    if dut.tester is None or dut.peer is None or dut.peer.netns is None:
        raise ConfigError(
            f"{args.bench}: DUT {dut.name} has no two-NIC tester: give it `tester: {{ceilings: FILE}}` and the "
            "peer as the PC's second NIC (`peer: {ip: ..., netns: ...}`); the virtual bench calibrates itself"
        )
    if not 0.2 <= args.seconds <= 600 or not 0 <= args.tester_slow_ns <= 10_000_000:
        raise ConfigError("--seconds must lie in 0.2..600 and --tester-slow-ns in 0..10000000")
    require_root()
    require_tester()
    pc, peer, pc_nic, peer_nic = two_nic_ends(dut.network.pc_netns, dut.network.pc_ip, dut.peer.netns, dut.peer.ip)
    link = dut.link.rate_mbit
    print(f"calibrating the frame tester: {pc_nic.text()} -> {peer_nic.text()}, {link:g} Mbit/s, joined by a cable "
          "(a DUT between them would set the ceilings instead)")  # fmt: skip
    ceilings = []
    for size in args.frame_sizes:
        ceilings.append(measure_ceiling(pc, peer, size, link, args.tester_slow_ns, args.seconds))
        c = ceilings[-1]
        # a frame lost with nothing between the NICs is the tester's own limit: the ceiling counts
        # what arrived (received over time), so it stays below what the receiving end can take
        print(f"  {size:5d} B: {c.fps:10,.0f} of {c.line_fps:10,.0f} frames/s, {c.lost} lost")
    path = dut.tester.ceilings_path()
    for c in ceilings:
        c.source = "calibrated now"
    save_ceilings(path, ceilings, pc_nic, peer_nic, link, args.tester_slow_ns)
    print(ceilings_table(ceilings))
    print(f"written: {path}")
    return path


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        calibrate(args)
    except ConfigError as exc:
        print(f"calibrate-tester: {exc}", file=sys.stderr)
        return int(ExitCode.USAGE_ERROR)
    except BenchError as exc:
        print(f"calibrate-tester: {exc}", file=sys.stderr)
        return int(ExitCode.BENCH_FAULT)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
