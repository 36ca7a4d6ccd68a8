"""What a case carries, compared between two runs of the same cases: a change that makes the suite
faster must not lose any of it. Per case (its Allure result), the attachments by name (the
figures inside a name, e.g. a capture's packet count, read as `N`), each attachment's line count
(a console log or stdout that lost lines), the parameters and labels by name; per record
(results.jsonl), its keys, nested ones included. Prints what one run has that the other has not;
exit 1 when the second run lacks anything the first had.

  python -m benchmarks.evidence_diff BEFORE_DIR AFTER_DIR   # two --results-dir of the same selection
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

NUMBER = re.compile(r"\d+(\.\d+)?")
LINES_TOLERANCE = 0.2  # a text attachment with fewer lines than this share below the first run's: lost lines


def _case(result: dict) -> str:
    point = next((p["value"] for p in result.get("parameters", []) if p["name"] == "scenario_case"), None)
    name = str(point or result.get("name", "?")).strip("'")
    return "Run summary" if name.startswith("Run summary") else name  # (its name has the run's time)


def cases(results_dir: Path) -> dict[str, dict[str, object]]:
    """Per case: its attachments (name -> line count, or -1 for a binary one), parameter and label names."""
    allure = results_dir / "allure-results"
    out: dict[str, dict[str, object]] = {}
    for f in sorted(allure.glob("*-result.json")):
        result = json.loads(f.read_text())
        attachments: dict[str, int] = {}
        for a in result.get("attachments", []):
            path = allure / a["source"]
            text = a.get("type", "").startswith("text") or path.suffix in (".txt", ".json", ".csv")
            lines = path.read_bytes().count(b"\n") if text and path.exists() else -1
            attachments[NUMBER.sub("N", a["name"])] = lines
        out[_case(result)] = {
            "attachments": attachments,
            "parameters": sorted(p["name"] for p in result.get("parameters", [])),
            "labels": sorted(Counter(label["name"] for label in result.get("labels", []))),
            "status": result.get("status"),
        }
    return out


def _keys(value: object, prefix: str = "") -> set[str]:
    if not isinstance(value, dict):
        return set()
    found = set()
    for k, v in value.items():
        found.add(prefix + k)
        counters = isinstance(v, dict) and v and all(isinstance(x, int | float) for x in v.values())
        if not counters:  # (a map of counters holds those that moved in the case: data, not fields)
            found |= _keys(v, f"{prefix}{k}.")
    return found


def records(results_dir: Path) -> dict[str, set[str]]:
    """Per record (scenario/case), its keys."""
    out: dict[str, set[str]] = {}
    path = results_dir / "results.jsonl"
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.strip():
            r = json.loads(line)
            if "values" in r:
                out.setdefault(f"{r['scenario']}/{r['case']}", set()).update(_keys(r))
    return out


def compare(before: Path, after: Path) -> list[str]:
    """What `after` lacks that `before` carried (one line each)."""
    lost: list[str] = []
    old, new = cases(before), cases(after)
    for case, was in old.items():
        now = new.get(case)
        if now is None:
            lost.append(f"{case}: no result in the second run")
            continue
        for name, lines in was["attachments"].items():  # type: ignore[union-attr]
            got = now["attachments"].get(name)  # type: ignore[union-attr]
            if got is None:
                lost.append(f"{case}: attachment {name!r} missing")
            elif lines > 0 and got < lines * (1 - LINES_TOLERANCE):
                lost.append(f"{case}: attachment {name!r} has {got} lines, the first run's {lines}")
        for field in ("parameters", "labels"):
            for name in sorted(set(was[field]) - set(now[field])):  # type: ignore[arg-type]
                lost.append(f"{case}: {field[:-1]} {name!r} missing")
    old_records, new_records = records(before), records(after)
    for case, keys in old_records.items():
        missing = keys - new_records.get(case, set())
        if case not in new_records:
            lost.append(f"record {case}: missing")
        elif missing:
            lost.append(f"record {case}: keys missing: {', '.join(sorted(missing))}")
    return lost


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    for d in (args.before, args.after):
        if not (d / "allure-results").is_dir():
            parser.error(f"{d}: no allure-results/ in it (a --results-dir of the suite)")
    lost = compare(args.before, args.after)
    n_cases, n_records = len(cases(args.before)), len(records(args.before))
    for line in lost:
        print(f"lost: {line}")
    print(f"{len(lost)} lost of what {n_cases} cases and {n_records} records carried in {args.before}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
