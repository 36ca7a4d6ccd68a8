"""benchmarks.evidence_diff: what a case carried in one run and not in another (an attachment, lines
of a text attachment, a parameter, a record's field) is named; what only differs in its figures
(a capture's packet count in its name, the counters that moved in a case) is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.evidence_diff import compare, main

pytestmark = pytest.mark.selftest


def _run(root: Path, packets: int, stdout_lines: int, counters: dict[str, int], with_stats: bool = True) -> Path:
    allure = root / "allure-results"
    allure.mkdir(parents=True)
    attachments = [("stdout", "out.txt", "text/plain", "line\n" * stdout_lines),
                   (f"wire: pc side capture ({packets} packets, headers only, pcap.gz)", "cap.pcap.gz",
                    "application/gzip", "x")]  # fmt: skip
    if with_stats:
        attachments.append(("DUT stats before", "stats.txt", "text/plain", "link xmit=1\n"))
    for _name, source, _kind, body in attachments:
        (allure / source).write_text(body)
    result = {
        "name": "test_scenario[baseline/tcp-dut_tx]", "status": "passed",
        "parameters": [{"name": "scenario_case", "value": "'baseline/tcp-dut_tx'"}, {"name": "link", "value": "20"}],
        "labels": [{"name": "suite", "value": "baseline"}],
        "attachments": [{"name": n, "source": s, "type": t} for n, s, t, _ in attachments],
    }  # fmt: skip
    (allure / "a-result.json").write_text(json.dumps(result))
    extra = {"wire": {"counters": {"dut": counters}}, "rfc6349": {"ttr": 1.0, "source": "ping"}}
    record = {"scenario": "baseline", "case": "tcp-dut_tx", "values": [18.9], "median": 18.9, "extra": extra}
    (root / "results.jsonl").write_text(json.dumps(record) + "\n")
    return root


def test_the_same_evidence_with_other_figures_is_not_a_loss(tmp_path: Path) -> None:
    before = _run(tmp_path / "a", 5161, 104, {"link_xmit": 3309, "etharp_drop": 2})
    after = _run(tmp_path / "b", 5159, 104, {"link_xmit": 3308})
    assert compare(before, after) == []
    assert main([str(before), str(after)]) == 0


def test_a_missing_attachment_lost_lines_and_a_missing_field_are_named(tmp_path: Path) -> None:
    before = _run(tmp_path / "a", 5161, 104, {"link_xmit": 1})
    after = _run(tmp_path / "b", 5161, 56, {"link_xmit": 1}, with_stats=False)
    record = json.loads((after / "results.jsonl").read_text())
    del record["extra"]["rfc6349"]
    (after / "results.jsonl").write_text(json.dumps(record) + "\n")
    lost = compare(before, after)
    assert "baseline/tcp-dut_tx: attachment 'DUT stats before' missing" in lost
    assert "baseline/tcp-dut_tx: attachment 'stdout' has 56 lines, the first run's 104" in lost
    assert "record baseline/tcp-dut_tx: keys missing: extra.rfc6349, extra.rfc6349.source, extra.rfc6349.ttr" in lost
    assert main([str(before), str(after)]) == 1
