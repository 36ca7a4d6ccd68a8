"""Checks a run's JUnit XML the way CI reads it: every test case that ran carries its numbers as
properties (fixtures/report.py). Prints one line; exit 1 names the cases without them.

    python -m hil.report.junit_numbers RESULTS_DIR/junit.xml
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from hil.results.recorder import CaseRecord


def summarize(path: Path) -> tuple[str, list[str]]:
    """One line about the file, and the cases that ran without a recorded number."""
    root = ET.parse(path).getroot()
    ran, skipped, numbers, bare = 0, 0, 0, []
    for case in root.iter("testcase"):
        if case.find("skipped") is not None:
            skipped += 1
            continue
        ran += 1
        props = [p for p in case.iter("property") if "/" in p.get("name", "")]
        numbers += len(props)
        if not props:
            bare.append(f"{case.get('classname')}::{case.get('name')}")
    failed = sum(1 for c in root.iter("testcase") if c.find("failure") is not None or c.find("error") is not None)
    line = f"{path}: {ran} cases ran ({failed} failed), {skipped} skipped; {numbers} recorded numbers as properties"
    return line, bare


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m hil.report.junit_numbers JUNIT_XML", file=sys.stderr)
        return 4
    path = Path(args[0])
    try:
        line, bare = summarize(path)
    except (OSError, ET.ParseError) as exc:
        print(f"junit: {path}: {exc}", file=sys.stderr)
        return 3
    print(line)
    if bare:
        print(f"junit: {len(bare)} cases ran without a recorded number: {', '.join(bare[:10])}", file=sys.stderr)
        return 1
    return 0


def case_properties(rec: CaseRecord) -> list[tuple[str, object]]:
    """One record's numbers as (name, value) properties."""
    key = f"{rec.scenario}/{rec.case}"
    out: list[tuple[str, object]] = [(f"{key}/{name}", round(value, 6)) for name, value in rec.metrics().items()]
    out.append((f"{key}/repetitions", len(rec.values)))
    out += [(f"{key}/run_{i}", round(v, 6)) for i, v in enumerate(rec.values, 1)] if len(rec.values) > 1 else []
    if rec.theory is not None:
        out.append((f"{key}/theory_{'mbps' if rec.unit == 'Mbit/s' else 'value'}", round(rec.theory, 6)))
    out += [(f"{key}/{limit}", value) for limit, value in rec.threshold.items()]
    for metric, compared in rec.baseline.items():
        out.append((f"{key}/baseline_{metric}", compared["baseline"]))
        out.append((f"{key}/regression_limit_{metric}", compared["limit"]))
    if rec.generator_limited:
        out.append((f"{key}/generator_limited", "true"))
    out.append((f"{key}/verdict", rec.verdict))
    return out


if __name__ == "__main__":
    sys.exit(main())
