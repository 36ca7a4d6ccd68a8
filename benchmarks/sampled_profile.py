"""Where the suite's own process spends its wall time, by sampling: py-spy (PyPI) records the
run's stacks (every thread, idle ones too: a console read or a child process waited for is wall
time) and this module sums the main thread's samples per function of the suite (hil/, fixtures/,
conftest) and of pytest-embedded, each function counted once per sample (inclusive), and per
place the process waited or ran (its innermost suite frame and the leaf below it).

The step clock (hil.step_clock) names a case's steps; this says which functions inside them
cost the time, e.g. pytest-embedded's console closed per case, or a console round trip."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SUITE_PARTS = ("hil/", "fixtures/", "conftest.py", "pytest_embedded")  # the frames that are the suite's
THREAD_START = "_bootstrap (threading.py"  # a stack below this is a helper thread's, not the main thread's
RATE_HZ = 100


@dataclass
class Profile:
    rate_hz: int
    samples: int = 0  # the main thread's
    inclusive: Counter[str] | None = None  # samples per suite function on the stack
    waits: Counter[tuple[str, str]] | None = None  # samples per (innermost suite function, leaf below)

    def seconds(self, samples: int) -> float:
        return samples / self.rate_hz


def py_spy() -> str:
    """py-spy's path: beside the running Python (the venv's), else on PATH."""
    beside = Path(sys.executable).with_name("py-spy")
    found = str(beside) if beside.is_file() else shutil.which("py-spy")
    if found is None:
        raise SystemExit("py-spy is not installed: pip install -r requirements.txt (py-spy, PyPI)")
    return found


def recorded(argv: list[str], out: Path, rate_hz: int = RATE_HZ, cwd: Path | None = None) -> int:
    """Runs `argv` with py-spy attached to it (raw stacks to `out`, every thread, idle ones too);
    returns the program's exit code. py-spy only watches: the program is this process's child,
    so it runs to its end whatever py-spy does (py-spy 0.4.0's --nonblocking mode panicked on a
    code object read mid-change and, as the program's parent, left it running without a parent)."""
    program = subprocess.Popen(argv, cwd=cwd)
    spy = subprocess.Popen(
        [py_spy(), "record", "--pid", str(program.pid), "--idle", "--rate", str(rate_hz), "--format", "raw",
         "--output", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        code = program.wait()
    finally:
        if program.poll() is None:  # interrupted: the program ends with this benchmark
            program.terminate()
            program.wait()
        try:
            _, err = spy.communicate(timeout=30)  # it writes its file once the program is gone
        except subprocess.TimeoutExpired:
            spy.kill()
            _, err = spy.communicate()
    if not out.is_file():
        print(f"py-spy wrote no samples (exit {spy.returncode}): {err.strip()[-500:]}", file=sys.stderr)
    return code


def _name(frame: str) -> str:
    """`func (path/file.py:12)` -> `func (path/file.py)`: a function, whichever line it was on."""
    func, _, where = frame.partition(" (")
    return f"{func} ({where.rsplit(':', 1)[0]})" if where else func


def summarise(lines: Iterable[str], rate_hz: int = RATE_HZ) -> Profile:
    """A py-spy raw file's lines (`frame;frame;... count`, outermost first) as the main thread's profile."""
    profile = Profile(rate_hz, 0, Counter(), Counter())
    assert profile.inclusive is not None and profile.waits is not None
    for line in lines:
        stack, _, count = line.strip().rpartition(" ")
        if not stack or not count.isdigit() or THREAD_START in stack:
            continue
        n = int(count)
        profile.samples += n
        frames = stack.split(";")
        ours = [_name(f) for f in frames if any(part in f for part in SUITE_PARTS)]
        for name in dict.fromkeys(ours):  # once per sample, however deep the recursion
            profile.inclusive[name] += n
        if ours:
            profile.waits[(ours[-1], _name(frames[-1]))] += n
    return profile


def report(profile: Profile, top: int = 15) -> list[str]:
    assert profile.inclusive is not None and profile.waits is not None
    lines = [f"the main thread: {profile.seconds(profile.samples):.1f} s sampled at {profile.rate_hz} Hz"]
    lines.append("the suite's functions, inclusive (seconds on the stack):")
    lines += [f"    {profile.seconds(n):7.1f} s  {name}" for name, n in profile.inclusive.most_common(top)]
    lines.append("where it ran or waited (the innermost suite function <- what ran below it):")
    waits = profile.waits.most_common(top)
    lines += [f"    {profile.seconds(n):7.1f} s  {ours} <- {leaf}" for (ours, leaf), n in waits]
    return lines
