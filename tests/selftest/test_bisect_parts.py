"""The bisection's parts without a bench: the commits it walks (a scratch git repository), how a
commit's repetitions are classified against the two ends, the one case's numbers it reads from a
run's results.jsonl, and a user's firmware built by the bench file's command in a worktree."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from hil.bisect.__main__ import RESULTS_MARK, fresh_results_dir
from hil.bisect.__main__ import main as bisect_main
from hil.bisect.commits import BisectError, between, commit, resolve
from hil.bisect.firmware_trees import Worktrees
from hil.bisect.from_history import ends_from_history
from hil.bisect.measure import case_values, measure
from hil.bisect.sources import RepoFirmware, Unbuildable
from hil.bisect.verdict import Sample, classify, ends_apart, welch_t
from hil.config.sections import FirmwareConfig
from hil.dut.bench_file import load_bench
from hil.dut.build_identity import commit_of
from hil.exit_codes import ExitCode
from hil.report.history import MetricsHistory, RunNumbers

pytestmark = pytest.mark.selftest

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@t.invalid"}  # fmt: skip


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], env=ENV, capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    """Six commits; the third and fourth change nothing under firmware/ (a doc)."""
    _git(tmp_path, "init", "-q", "-b", "main")
    shas = []
    for k in range(6):
        target = tmp_path / ("docs.md" if k in (2, 3) else "firmware/opts.h")
        target.parent.mkdir(exist_ok=True)
        target.write_text(f"{k}\n")
        _git(tmp_path, "add", "-A")
        _git(tmp_path, "commit", "-q", "-m", f"commit {k}")
        shas.append(_git(tmp_path, "rev-parse", "HEAD"))
    return tmp_path, shas


def test_the_commits_after_the_good_end_up_to_the_bad_one(repo: tuple[Path, list[str]]) -> None:
    path, shas = repo
    walked = between(path, shas[1], shas[5], "firmware", ExitCode.USAGE_ERROR)
    assert [c.sha for c in walked] == shas[2:]
    assert [c.subject for c in walked] == ["commit 2", "commit 3", "commit 4", "commit 5"]
    # a commit that leaves the firmware alone has its parent's firmware tree: not built again
    assert walked[0].tree == walked[1].tree == commit(path, shas[1], "firmware").tree != walked[2].tree


@pytest.mark.parametrize(
    ("good", "bad", "message"),
    [
        (5, 1, "is not an ancestor of --bad"),
        (3, 3, "are the same commit"),
    ],
)
def test_ends_in_the_wrong_order_are_one_line(repo: tuple[Path, list[str]], good: int, bad: int, message: str) -> None:
    path, shas = repo
    with pytest.raises(BisectError, match=message) as exc:
        between(path, shas[good], shas[bad], "firmware", ExitCode.USAGE_ERROR)
    assert exc.value.code == ExitCode.USAGE_ERROR


def test_an_unknown_ref_is_one_line(repo: tuple[Path, list[str]]) -> None:
    with pytest.raises(BisectError, match=r"--good v9: not a commit of "):
        resolve(repo[0], "v9", "--good", ExitCode.USAGE_ERROR)


GOOD = Sample((2.288, 2.287, 2.289))
BAD = Sample((1.143, 1.142, 1.144))


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ((2.286, 2.288, 2.290), "good"),
        ((1.140, 1.143, 1.145), "bad"),
        ((1.70, 1.72, 1.71), "bad"),  # nearer the bad end, far from the good one
        ((1.2, 2.3, 1.7), "unclear"),  # a spread that reaches both ends
    ],
)
def test_a_commit_is_the_nearer_end_when_far_from_the_other(values: tuple[float, ...], kind: str) -> None:
    assert classify(Sample(values), GOOD, BAD).kind == kind


def test_ends_within_their_spread_are_not_told_apart() -> None:
    assert ends_apart(GOOD, BAD)
    assert not ends_apart(Sample((94.1, 93.2, 95.0)), Sample((93.8, 94.6, 92.9)))
    # a repeatable rate is credited with 0.5 % of spread: 1 % apart is not a difference
    assert not ends_apart(Sample((2.30, 2.30, 2.30)), Sample((2.277, 2.277, 2.277)))


def _results(tmp_path: Path, cases: list[str]) -> Path:
    rows = [{"scenario": "window_dut", "case": c, "unit": "Mbit/s", "values": [2.28, 2.29]} for c in cases]
    rows.append({"scenario": "window_dut", "case": "dut_rx-wnd4", "verdict": "passed"})  # a verdict row
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_the_one_case_numbers_are_read(tmp_path: Path) -> None:
    assert case_values(_results(tmp_path, ["dut_rx-wnd4"])) == ("window_dut/dut_rx-wnd4", "Mbit/s", [2.28, 2.29])


@pytest.mark.parametrize("cases", [[], ["dut_rx-wnd2", "dut_rx-wnd4"]])
def test_not_exactly_one_case_is_a_usage_error(tmp_path: Path, cases: list[str]) -> None:
    with pytest.raises(BisectError, match=rf"-k selected {len(cases)} cases with numbers") as exc:
        case_values(_results(tmp_path, cases))
    assert exc.value.code == ExitCode.USAGE_ERROR


def _user_bench(tmp_path: Path, repo: Path, command: str) -> Path:
    bench = tmp_path / "user-bench.yaml"
    bench.write_text(yaml.safe_dump({"name": "user", "duts": [{
        "name": "board", "kind": "virtual", "console": {"port": "pty"}, "thresholds": "virtual-100m",
        "firmware": {"image": str(repo / "out" / "fw"), "build": {"repo": str(repo), "command": command}},
    }]}))  # fmt: skip
    return bench


def test_a_users_firmware_is_built_by_its_command_in_a_worktree(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    """firmware.build: the command runs in a checkout of the commit; the run gets the bench file
    with firmware.image pointing at what it made there."""
    path, shas = repo
    bench = _user_bench(tmp_path, path, "mkdir -p out && cp firmware/opts.h out/fw")
    dut = load_bench(bench).duts[0]
    assert dut.firmware.build is not None and dut.firmware.image is not None
    out = tmp_path / "out"
    out.mkdir()
    with Worktrees() as worktrees:
        source = RepoFirmware(worktrees, bench, 0, dut.firmware.build, dut.firmware.image)
        ready = source.prepare(commit(path, shas[4], ""), out)
        made = yaml.safe_load(Path(ready.args[1]).read_text())["duts"][0]["firmware"]
        assert ready.built and "build" not in made and Path(made["image"]).read_text() == "4\n"
        assert Path(made["image"]).is_relative_to(worktrees.root)  # type: ignore[arg-type]
    assert not Path(made["image"]).exists() and _git(path, "worktree", "list").count("\n") == 0


@pytest.mark.parametrize(
    ("command", "message"),
    [("echo nope >&2; exit 3", "exited 3: nope"), ("true", "made no out/fw")],
)
def test_a_commit_that_does_not_build_is_skipped_with_the_reason(
    repo: tuple[Path, list[str]], tmp_path: Path, command: str, message: str
) -> None:
    path, shas = repo
    bench = _user_bench(tmp_path, path, command)
    dut = load_bench(bench).duts[0]
    with Worktrees() as worktrees, pytest.raises(Unbuildable, match=message):
        RepoFirmware(worktrees, bench, 0, dut.firmware.build, dut.firmware.image).prepare(  # type: ignore[arg-type]
            commit(path, shas[1], ""), tmp_path
        )


@pytest.mark.parametrize(
    ("firmware", "message"),
    [
        ({"build": {"repo": "/tmp", "command": "make"}}, "build: needs firmware.image"),
        ({"image": "/opt/fw.elf", "build": {"repo": "/tmp/fw", "command": "make"}}, "is not inside build.repo"),
    ],
)
def test_a_build_section_without_its_image_is_refused(firmware: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FirmwareConfig.model_validate(firmware)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--good", "HEAD"], "--good and -k are required (or --from-history CASE)"),
        (["--good", "HEAD", "-k", "x", "--repeat", "1"], "--repeat must be at least 2"),
        (["--good", "HEAD", "-k", "x", "--bench", "nope.yaml"], "--bench nope.yaml: no such file"),
        (["--good", "no-such-ref", "-k", "x"], "--good no-such-ref: not a commit of"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_4(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert bisect_main(argv) == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert err.startswith("bisect: ") and message in err and err.count("\n") == 1, err


def test_equal_samples_without_spread_are_not_apart() -> None:
    """A case whose number reads 0 at both ends (a loss, a count) has no difference to bisect."""
    zeros = Sample((0.0, 0.0, 0.0))
    assert welch_t(zeros, zeros) == 0.0
    assert not ends_apart(zeros, Sample((0.0, 0.0)))


def test_a_results_folder_with_other_files_is_refused_never_deleted(tmp_path: Path) -> None:
    kept = tmp_path / "results"
    (kept / "history").mkdir(parents=True)
    (kept / "results.jsonl").write_text("{}\n")
    with pytest.raises(BisectError, match="has files a bisection did not make") as exc:
        fresh_results_dir(kept)
    assert exc.value.code == ExitCode.USAGE_ERROR and (kept / "results.jsonl").is_file()
    made = tmp_path / "bisect"
    fresh_results_dir(made)
    (made / "abc1234").mkdir()
    fresh_results_dir(made)  # a bisection's own folder is emptied for the next one
    assert [p.name for p in made.iterdir()] == [RESULTS_MARK]


def test_a_fixed_image_cannot_be_bisected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "fixed.yaml"
    bench.write_text(yaml.safe_dump({"duts": [{
        "name": "board", "kind": "virtual", "console": {"port": "pty"}, "thresholds": "virtual-100m",
        "firmware": {"image": str(tmp_path / "fw")},
    }]}))  # fmt: skip
    assert bisect_main(["--good", "HEAD~1", "-k", "x", "--bench", str(bench)]) == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert "every commit would be measured on the same firmware; give firmware.build" in err, err
    assert err.count("\n") == 1, err


def test_a_run_whose_dut_failed_before_measuring_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A firmware that crashes the DUT before the case measures: exit 1 and no number, one message
    saying so (not a missing file's traceback, nor a usage error about -k)."""

    class Crashed:
        returncode = ExitCode.DUT_FAILED

        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def communicate(self) -> tuple[str, None]:
            return "FAILED tests/hil/test_scenarios.py::test_scenario[window_dut/dut_rx-wnd4] - DutError: gone\n", None

    monkeypatch.setattr("hil.bisect.measure.subprocess.Popen", Crashed)
    with pytest.raises(BisectError, match="recorded no number: the DUT failed before the case measured") as exc:
        measure(["-k", "wnd4"], tmp_path, {})
    assert exc.value.code == ExitCode.DUT_FAILED and "DutError: gone" in str(exc.value)


def test_a_build_past_its_timeout_is_skipped_and_leaves_nothing_running(
    repo: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """The build command's whole process group ends at its timeout (make or ninja under its shell
    too), and its log says what it printed."""
    path, shas = repo
    marker = f"hil-bisect-build-{os.getpid()}"
    bench = _user_bench(tmp_path, path, f"echo started; bash -c 'exec -a {marker} sleep 60' & wait")
    raw = yaml.safe_load(bench.read_text())
    raw["duts"][0]["firmware"]["build"]["timeout_s"] = 1
    bench.write_text(yaml.safe_dump(raw))
    dut = load_bench(bench).duts[0]
    with Worktrees() as worktrees, pytest.raises(Unbuildable, match="took more than 1 s"):
        RepoFirmware(worktrees, bench, 0, dut.firmware.build, dut.firmware.image).prepare(  # type: ignore[arg-type]
            commit(path, shas[1], ""), tmp_path
        )
    assert "started" in (tmp_path / "build.log").read_text()
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False)
    assert left.stdout == "", left.stdout


def _history_file(tmp_path: Path, step_at: int = 5, runs: int = 8) -> Path:
    hist = MetricsHistory(tmp_path / "history" / "metrics.jsonl")
    for i in range(runs):
        version = "v1.0-3-gaaaaaaa" if i < step_at else "v1.0-4-gbbbbbbb-dirty"
        value = 18.0 * (0.97 if i >= step_at else 1.0) + 0.01 * (i % 2)
        hist.add(RunNumbers(f"R{i}", f"t{i}", "host-dut", "quick", {"baseline/udp-dut_tx/mbps": value},
                            {"version": version, "build": f"{i >= step_at:012d}"}))  # fmt: skip
    return hist.path


def test_the_ends_of_a_bisection_come_from_the_historys_regression(tmp_path: Path) -> None:
    ends = ends_from_history(_history_file(tmp_path), "baseline/udp-dut_tx")
    assert (ends.good, ends.bad) == ("aaaaaaa", "bbbbbbb"), ends
    assert "since run R5, build v1.0-4-gbbbbbbb-dirty" in ends.describe(), ends.describe()
    assert commit_of("0123abcd") == "0123abcd" and commit_of("unknown") is None and commit_of("v5.3.1") is None


def test_no_regression_in_the_history_is_one_clear_usage_error(tmp_path: Path) -> None:
    with pytest.raises(BisectError, match="no regression of it") as exc:
        ends_from_history(_history_file(tmp_path, step_at=99), "baseline/udp-dut_tx")
    assert exc.value.code == ExitCode.USAGE_ERROR
    with pytest.raises(BisectError, match="no such file"):
        ends_from_history(tmp_path / "none.jsonl", "baseline/udp-dut_tx")
