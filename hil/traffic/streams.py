"""Bursty multi-stream UDP (the thesis's Network Stream Service): stream profiles as data files
(stream-profiles/), and a host's stream peer (hil.traffic.stream_peer) started on that host,
locally in a namespace or remotely over SSH, through the host's argv prefix.

A profile's `direction` is the DUT's view: `dut_tx` streams flow towards the PC (from the DUT's
console, or from the peer host through a DUT in the path), `dut_rx` streams from the PC.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
from pathlib import Path
from types import TracebackType
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hil.config.errors import load_model
from hil.errors import BenchError
from hil.paths import PROJECT_ROOT
from hil.plumbing.cpu_plan import raise_session
from hil.traffic import stream_peer
from hil.traffic.stream_peer import BASE_PORT, GO, HEADER, READY, STARTED

STREAMS_DIR = PROJECT_ROOT / "stream-profiles"
# what a host runs: the peer's own source, given to that host's Python with -c (a remote host
# needs nothing of the suite installed, and nothing is left on it)
PEER_SOURCE = Path(stream_peer.__file__).read_text()
START_TIMEOUT_S = 15.0  # a remote host's Python starting over SSH on a busy bench


class StreamSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[int, Field(ge=1, le=999)]
    direction: Literal["dut_tx", "dut_rx"]
    size: Annotated[int, Field(ge=HEADER.size, le=1472)]
    burst: Annotated[int, Field(ge=1, le=1000)]
    period_ms: Annotated[int, Field(ge=1)]
    threshold_ms: Annotated[int, Field(ge=1)]
    gap_us: Annotated[int, Field(ge=0)]

    @property
    def port(self) -> int:
        return BASE_PORT + self.id

    @model_validator(mode="after")
    def _burst_fits(self) -> StreamSpec:
        if self.gap_us * (self.burst - 1) >= self.period_ms * 1000:
            raise ValueError(f"stream {self.id}: a burst of {self.burst} with {self.gap_us} us gaps exceeds the period")
        return self


class StreamProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    duration_s: Annotated[float, Field(gt=0)]
    streams: Annotated[list[StreamSpec], Field(min_length=1)]

    @model_validator(mode="after")
    def _unique(self) -> StreamProfile:
        ids = [s.id for s in self.streams]
        if len(set(ids)) != len(ids):
            raise ValueError("stream ids must be unique")
        return self


def load_profile(name: str) -> StreamProfile:
    return load_model(STREAMS_DIR / f"{name}.yaml", StreamProfile, "a stream profile (name, duration_s, streams)")


class StreamPeerRun:
    """A host's stream peer for one test: started with its configuration on enter (it has bound
    its receivers when enter returns), `go()` starts its streams, `result()` waits for its report;
    always ended on exit (its process group killed, which also ends an SSH session's remote side).

    prefix: the argv prefix that runs a program on the host; python: that host's Python."""

    def __init__(self, name: str, prefix: list[str], python: str, config: dict) -> None:  # type: ignore[type-arg]
        self.name = name
        self.argv = [*prefix, python, "-c", PEER_SOURCE]
        self.config = config
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._seen: list[str] = []

    def __enter__(self) -> Self:
        try:
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip
        except FileNotFoundError as exc:
            raise BenchError(f"{self.name} stream peer: program not found: {exc.filename}") from None
        raise_session(self._proc.pid)  # its own session: the bench's priority (hil.plumbing.cpu_plan)
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self._expect(STARTED, START_TIMEOUT_S)
            self._write(json.dumps(self.config))
            self._expect(READY, START_TIMEOUT_S)
        except BaseException:
            self._end()
            raise
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._end()

    def go(self) -> None:
        self._write(GO)

    def result(self, timeout_s: float) -> dict:  # type: ignore[type-arg]
        """The peer's JSON report (its last line); a BenchError naming what it printed otherwise."""
        line = self._next(timeout_s)
        while line is not None and not line.startswith("{"):
            line = self._next(timeout_s)
        if line is None:
            raise BenchError(f"{self.name} stream peer printed no result ({self._said()})")
        try:
            out = json.loads(line)
        except ValueError:
            raise BenchError(f"{self.name} stream peer printed no result ({self._said()})") from None
        if "error" in out:
            raise BenchError(f"{self.name} stream peer: {out['error']}")
        return out  # type: ignore[no-any-return]

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line.rstrip("\r\n"))
        self._lines.put(None)

    def _next(self, timeout_s: float) -> str | None:
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            raise BenchError(f"{self.name} stream peer said nothing for {timeout_s:g} s ({self._said()})") from None
        if line is not None:
            self._seen.append(line)
        return line

    def _expect(self, word: str, timeout_s: float) -> None:
        while (line := self._next(timeout_s)) != word:
            if line is None:
                raise BenchError(f"{self.name} stream peer ended before `{word}` ({self._said()})")

    def _write(self, line: str) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise BenchError(f"{self.name} stream peer is gone ({self._said()})") from None

    def _said(self) -> str:
        return " | ".join(self._seen[-3:])[-300:] or "no output"

    def _end(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for f in (proc.stdin, proc.stdout):
            if f is not None:
                with contextlib.suppress(OSError):
                    f.close()
