"""How a benchmark runs as a program: SIGTERM and SIGHUP (the terminal or the CI job's pty closed)
unwind its bench's cleanup as Ctrl-C does; a bench or DUT that fails is one line, exit 2."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable

from hil.errors import BenchError, DutError


def parser(doc: str | None) -> argparse.ArgumentParser:
    """A benchmark's options: --repeat, --duration, --quick (one repetition of 3 s) and
    --figures-only (a missed target printed, not the exit code's)."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3, help="repetitions per case (default 3)")
    p.add_argument("--duration", type=float, default=5.0, help="seconds per test (default 5)")
    p.add_argument("--quick", action="store_true", help="1 repetition of 3 s (CI)")
    p.add_argument(
        "--figures-only", action="store_true",
        help="print a missed target but exit 0 (the test command: a figure of this host's speed is not its gate)",
    )  # fmt: skip
    return p


def parsed(p: argparse.ArgumentParser) -> argparse.Namespace:
    args = p.parse_args()
    if args.quick:
        args.repeat, args.duration = 1, 3.0
    if args.repeat < 1 or args.duration <= 0:
        p.error("--repeat must be >= 1 and --duration > 0")
    return args


def verdict(failures: list[str], figures_only: bool = False) -> int:
    """Each missed target on a line of its own; the exit code: 1 when one was missed, unless the run
    asked for figures only."""
    for f in failures:
        print(f"TARGET MISSED{' (figures only: not gated)' if figures_only else ''}: {f}")
    return 1 if failures and not figures_only else 0


def run_benchmark(run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(129))
    try:
        return run(args)
    except (BenchError, DutError) as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; the virtual link was removed", file=sys.stderr)
        return 130
