"""The process that draws a run's charts (hil.report.background_charts starts it): reads jobs from
its stdin, draws each and writes its PNG over the attachment's file (whole or not at all), and
answers each job on its stdout. A job is a pickled (id, path, draw, args, kwargs), `draw` a
function of hil.scenarios.charts; an answer a pickled (id, None) or (id, error line, traceback).

    python -m hil.report.chart_helper      (by the suite only)
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback
from pathlib import Path
from typing import Any, BinaryIO

from hil.scenarios.charts import load_pyplot


def draw_into(path: str, draw: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    png = draw(*args, **kwargs)
    if not png:
        raise ValueError(f"{draw.__name__} drew nothing")
    part = f"{path}.part"
    Path(part).write_bytes(png)
    os.replace(part, path)


def serve(jobs: BinaryIO, answers: BinaryIO) -> None:
    """Draws each job until its stdin ends."""
    while True:
        try:
            job_id, path, draw, args, kwargs = pickle.load(jobs)
        except EOFError:
            return
        try:
            draw_into(path, draw, args, kwargs)
            answer: tuple[object, ...] = (job_id, None)
        except Exception as exc:
            answer = (job_id, f"{type(exc).__name__}: {exc}", traceback.format_exc())
        pickle.dump(answer, answers)
        answers.flush()


def main() -> int:
    load_pyplot()
    serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
