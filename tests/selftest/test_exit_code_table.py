"""The exit codes are typed once, in hil/exit_codes.py: docs/exit-codes.md shows the table that
`python3 -m hil.exit_codes --markdown` prints, and `./suite` takes its codes from
`python3 -m hil.exit_codes --shell` - with the system's python3, before the suite's venv exists, so
the module needs nothing beyond Python's standard library at import."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys

import pytest

from hil.exit_codes import ExitCode, markdown_table, shell_lines
from hil.paths import PROJECT_ROOT

pytestmark = pytest.mark.selftest

DOC = PROJECT_ROOT / "docs" / "exit-codes.md"
SUITE = PROJECT_ROOT / "suite"


def test_the_documented_table_is_the_one_hil_exit_codes_prints() -> None:
    table = "\n".join(markdown_table())
    assert f"\n{table}\n" in DOC.read_text(), f"docs/exit-codes.md should show, as it is:\n{table}"


def test_the_module_imports_only_the_standard_library_at_its_top() -> None:
    tree = ast.parse((PROJECT_ROOT / "hil" / "exit_codes.py").read_text())
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    names = {a.name for n in top if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in top if isinstance(n, ast.ImportFrom)}
    assert names and all(n.split(".")[0] in sys.stdlib_module_names for n in names), names


@pytest.mark.parametrize("python", ["venv, no site-packages", "the system's python3"])
def test_the_shell_lines_come_from_a_python_without_the_venv(python: str) -> None:
    argv = [sys.executable, "-S"] if python.startswith("venv") else [shutil.which("python3") or "python3"]
    if not python.startswith("venv") and shutil.which("python3") is None:
        pytest.skip("no python3 on PATH")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = subprocess.run([*argv, "-m", "hil.exit_codes", "--shell"], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == shell_lines()
    assert shell_lines() == [f"EXIT_{c.name}={int(c)}" for c in ExitCode]


def test_the_suite_script_types_no_code_and_reads_them_all() -> None:
    script = SUITE.read_text()
    assert not re.findall(r"\bEXIT_\w+=\d", script), "./suite types an exit code: read it from hil.exit_codes"
    defined = {line.partition("=")[0] for line in shell_lines()}
    used = set(re.findall(r"\$\{?(EXIT_[A-Z_]+)", script))
    assert used and used <= defined, used - defined
    # the script's own lines that read them, run as they stand
    reading = [ln for ln in script.splitlines() if "hil.exit_codes --shell" in ln or ln.startswith("eval ")]
    assert len(reading) == 2, reading
    show = " ".join(f'"{name}=${name}"' for name in sorted(defined))
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join([*reading, f"printf '%s\\n' {show}"])],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == sorted(shell_lines())
