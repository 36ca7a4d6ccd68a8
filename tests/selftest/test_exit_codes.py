"""Every row of docs/exit-codes.md, shown for real: a child pytest run with the suite's exit-code
plugin (fixtures.exit_status) whose case ends that way, and the code it returns. A row added to
the table without a case here fails (`./suite` reads its codes from hil.exit_codes:
test_exit_code_table.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hil.exit_codes import ExitCode
from hil.paths import PROJECT_ROOT

pytestmark = pytest.mark.selftest

TABLE = PROJECT_ROOT / "docs" / "exit-codes.md"

# the body of the one test of the child run, per documented code (several ways for some)
CASES: dict[int, list[str]] = {
    0: ["assert 1 + 1 == 2"],
    1: [
        "assert 94.0 >= 150.0, 'BELOW THRESHOLD'",
        "from hil.errors import DutError\n    raise DutError('mbps=inf: not a finite number')",
    ],
    2: ["import os, signal, time\n    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(5)"],
    3: ["raise RuntimeError('a bug of the suite')"],
    4: ["from hil.config.errors import ConfigError\n    raise ConfigError('bench.yaml: duts[0].link: bad')"],
    5: [],  # no test at all
    75: ["from hil.errors import BenchError\n    raise BenchError('no probe found')"],
}


def _documented() -> list[int]:
    rows = [m.group(1) for line in TABLE.read_text().splitlines() if (m := re.match(r"^\| (\d+) \|", line))]
    return [int(code) for code in rows]


def _run(tmp_path: Path, body: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["fixtures.exit_status"]\n')
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    test = tmp_path / "test_child.py"
    test.write_text(f"def test_one() -> None:\n    {body}\n" if body is not None else "")
    env = os.environ | {"PYTHONPATH": str(PROJECT_ROOT)}
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:allure_pytest", str(test)]
    return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_every_code_of_the_suite_is_documented_once() -> None:
    assert sorted(_documented()) == sorted(int(c) for c in ExitCode), _documented()
    assert sorted(CASES) == sorted(_documented()), "a documented code without a case here (or one too many)"


@pytest.mark.parametrize(
    ("code", "body"),
    [(code, body) for code, bodies in CASES.items() for body in (bodies or [None])],
    ids=lambda v: str(v).split("\n")[-1].strip()[:40] if isinstance(v, str) or v is None else str(v),
)
def test_a_case_that_ends_this_way_gives_its_code(tmp_path: Path, code: int, body: str | None) -> None:
    proc = _run(tmp_path, body)
    assert proc.returncode == code, proc.stdout[-3000:] + proc.stderr[-2000:]
    if code not in (0, 2, 5):  # a failed run names its class in its last words
        assert f"hil: exit code {code}:" in proc.stdout, proc.stdout[-2000:]


def test_a_suite_error_is_one_line_before_its_traceback(tmp_path: Path) -> None:
    proc = _run(tmp_path, "raise RuntimeError('a bug of the suite')")
    lines = proc.stdout.splitlines()
    said = next(i for i, line in enumerate(lines) if line.startswith("hil: SUITE ERROR"))
    assert "RuntimeError: a bug of the suite" in lines[said]
    first_trace = next(i for i, line in enumerate(lines) if "raise RuntimeError" in line)
    assert said < first_trace, "\n".join(lines)
