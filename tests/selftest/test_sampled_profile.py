"""py-spy samples a real program of the suite and the profile names the suite's function it
waited in, with about the seconds it waited (benchmarks.sampled_profile, the overhead
benchmark's --sample)."""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks import sampled_profile
from hil.paths import PROJECT_ROOT

WAITER = "from hil.tools.watched_run import run_watched; run_watched(['sleep', '1.5'], 10, lambda: None, 'sleep')"


def test_a_wait_in_the_suite_is_found_where_it_waited(tmp_path: Path) -> None:
    out = tmp_path / "stacks.raw"
    assert sampled_profile.recorded([sys.executable, "-c", WAITER], out, cwd=PROJECT_ROOT) == 0
    with out.open() as raw:
        profile = sampled_profile.summarise(raw)
    assert profile.inclusive is not None and profile.waits is not None
    waited = profile.seconds(profile.inclusive["run_watched (hil/tools/watched_run.py)"])
    assert 1.2 < waited < 2.5, sampled_profile.report(profile)
    where, _ = profile.waits.most_common(1)[0]
    assert where[0] == "run_watched (hil/tools/watched_run.py)", sampled_profile.report(profile)
    assert any("run_watched" in line for line in sampled_profile.report(profile))


def test_helper_threads_and_bad_lines_are_left_out() -> None:
    lines = [
        "_bootstrap (threading.py:1012);_run (hil/plumbing/counter_sampler.py:40) 500",
        "main (x.py:1);read_line (hil/console/embedded_console.py:12);expect (pytest_embedded/dut.py:80) 30",
        "main (x.py:1);read_line (hil/console/embedded_console.py:14) 10",
        "garbage",
        "",
    ]
    profile = sampled_profile.summarise(lines, rate_hz=10)
    assert profile.samples == 40 and profile.inclusive is not None and profile.waits is not None
    assert profile.seconds(profile.inclusive["read_line (hil/console/embedded_console.py)"]) == 4.0
    assert "_run (hil/plumbing/counter_sampler.py)" not in profile.inclusive
    assert profile.waits[("expect (pytest_embedded/dut.py)", "expect (pytest_embedded/dut.py)")] == 30
