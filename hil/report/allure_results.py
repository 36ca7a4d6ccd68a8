"""Files in the Allure results directory written or trimmed after the run: the run summary as a
result of its own (a table attachment, its CSV, a link to the sortable page), and the fixture
entries of pytest-embedded and of the suite's plumbing taken out of the case pages, so a case
shows the DUT's bring-up and its traffic and nothing else."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from pathlib import Path

# the fixtures a case page shows (their allure titles): the DUT's bring-up
BRING_UP_TITLES = {
    "bench_link": "bench: virtual link and PC namespace up",
    "flashed_dut": "DUT flashed and booted",
    "dut_ready": "DUT holds the case's build configuration",
    "hil": "DUT console answers: identity, link, idle",
    "virtual_link": "bench: virtual link up",
    "start_host_dut": "host DUT firmware started",
    "peer_host": "bench: peer host answers (iperf 3, ping, Python)",
    "second_dut": "the second DUT (behind the DUT or beside it) flashed and booted",
}
SUMMARY_FEATURE = "Run summary"
HIL_EPIC = "HIL matrix"  # the epic of every measured case: "HIL matrix, DUT <name>"


def hil_epic(dut_name: str | None) -> str:
    return f"{HIL_EPIC}, DUT {dut_name}" if dut_name else HIL_EPIC


def _shown(entry: dict[str, object], side: str, keep: set[str]) -> bool:
    """A set-up entry of a bring-up fixture; a tear-down entry only when it failed (finalizers
    that went well say nothing to a reviewer, and pytest's own show an unknown status)."""
    if side == "afters":
        return entry.get("status") in ("failed", "broken")
    return str(entry.get("name", "")) in keep or entry.get("status") in ("failed", "broken")


def prune_fixtures(allure_dir: Path, keep: set[str] | None = None) -> int:
    """Drops from the containers every set-up entry but the bring-up fixtures' (`keep`, their
    titles) and every tear-down entry that did not fail; a container left empty is removed.
    Returns how many entries were dropped."""
    keep = set(BRING_UP_TITLES.values()) if keep is None else keep
    dropped = 0
    for path in allure_dir.glob("*-container.json"):
        try:
            container = json.loads(path.read_text())
        except ValueError:
            continue
        changed = False
        for side in ("befores", "afters"):
            entries = container.get(side) or []
            kept = [e for e in entries if _shown(e, side, keep)]
            if len(kept) != len(entries):
                dropped += len(entries) - len(kept)
                container[side] = kept
                changed = True
        if not (container.get("befores") or container.get("afters")):
            path.unlink()
        elif changed:
            path.write_text(json.dumps(container))
    return dropped


def write_attachment(allure_dir: Path, name: str, text: str, mime: str, ext: str) -> dict[str, str]:
    source = f"{uuid.uuid4()}-attachment.{ext}"
    (allure_dir / source).write_text(text)
    return {"name": name, "source": source, "type": mime}


def write_run_result(
    allure_dir: Path, *, key: str, title: str, failed: bool, dut: str, feature: str, severity: str,
    link: tuple[str, str], attachments: list[dict[str, str]], start_ms: int, stop_ms: int,
    message: str | None = None, status: str | None = None,
) -> Path:  # fmt: skip
    """A page of the run (not a test case) as an Allure result of its own in the run summary's
    group of the tree; the same history id every run (per `key` and DUT), so its History tab lists
    the runs. `link`: (name, file beside the report's index.html); `status` overrides passed /
    failed (e.g. skipped)."""
    # "hil-run-summary:<dut>" for the summary, as before there were other pages: its history goes on
    history_id = hashlib.md5(f"hil-{key.replace('_', '-')}:{dut}".encode()).hexdigest()  # an id, not security
    result = {
        "uuid": str(uuid.uuid4()),
        "historyId": history_id,
        "testCaseId": history_id,
        "fullName": f"hil.{key}[{dut}]",
        "name": title,
        "status": status or ("failed" if failed else "passed"),
        "statusDetails": {"message": message} if message else {},
        "stage": "finished",
        "start": start_ms,
        "stop": stop_ms,
        "labels": [
            {"name": "epic", "value": SUMMARY_FEATURE},
            {"name": "feature", "value": f"{feature}, DUT {dut}"},
            {"name": "severity", "value": severity},
            {"name": "framework", "value": "pytest"},
        ],
        "links": [{"name": link[0], "url": link[1], "type": "link"}],
        "attachments": attachments,
    }
    path = allure_dir / f"{result['uuid']}-result.json"
    path.write_text(json.dumps(result))
    return path


def write_summary_result(
    allure_dir: Path, *, title: str, failed: bool, dut: str, table_html: str, table_csv: str,
    start_ms: int, stop_ms: int, message: str | None = None, findings: str | None = None,
) -> Path:  # fmt: skip
    """The summary as an Allure result of its own (write_run_result): its findings, its table
    and CSV."""
    allure_dir.mkdir(parents=True, exist_ok=True)
    found = (
        [write_attachment(allure_dir, "findings: what the sweeps show", findings, "text/plain", "txt")]
        if findings
        else []
    )
    attachments = [
        *found,
        write_attachment(
            allure_dir, "summary: every case and metric against its criterion", table_html, "text/html", "html"
        ),
        write_attachment(allure_dir, "summary.csv", table_csv, "text/csv", "csv"),
    ]
    return write_run_result(
        allure_dir, key="run_summary", title=title, failed=failed, dut=dut, feature="every number of the run",
        severity="critical", link=("summary, sortable (summary.html)", "summary.html"), attachments=attachments,
        start_ms=start_ms, stop_ms=stop_ms, message=message,
    )  # fmt: skip


def write_page_result(
    allure_dir: Path, page: Path, *, key: str, title: str, shown_as: str, link_name: str, dut: str, feature: str,
    started: float, failed: bool = False, message: str | None = None, status: str | None = None,
) -> Path:  # fmt: skip
    """A page of the run (an HTML file beside the report's index.html) as its own Allure result that
    shows it inline (`shown_as`) and links the whole page (`link_name`)."""
    allure_dir.mkdir(parents=True, exist_ok=True)
    attachment = write_attachment(allure_dir, shown_as, page.read_text(), "text/html", "html")
    return write_run_result(
        allure_dir, key=key, title=title, failed=failed, dut=dut, feature=feature, severity="normal",
        link=(f"{link_name} ({page.name})", page.name), attachments=[attachment], start_ms=int(started * 1000),
        stop_ms=int(time.time() * 1000), message=message, status=status,
    )  # fmt: skip
