"""The frame tester's ceilings: its own best frame rate per frame size with no device between its
two ends (RFC 9971's recommendation before a device is measured). On the virtual bench they are
measured at the start of every run (hil.plumbing.tester_loop joins the ends); on a real bench the
engineer joins the PC's two NICs with a cable and `./suite calibrate-tester` measures them into a
file the bench file names (`tester: {ceilings: FILE}`), which a run reads and checks: the same
NICs (by link address), the same link rate, the same generator slowdown, every frame size."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hil.config.errors import ConfigError
from hil.traffic.frame_tester import FrameTrial, Phase, TesterEnd, line_rate_fps, run_frames
from hil.traffic.roles import GENERATOR_TOLERANCE

CALIBRATION_TRIALS = 2  # the tester's ceiling: the lower of these trials at the line rate
FILE_FORMAT = 1
CALIBRATE_COMMAND = "sudo ./suite calibrate-tester --bench FILE (the PC's two NICs joined by a cable, no DUT)"


@dataclass
class Ceiling:
    """The tester's own best frame rate at a frame size, measured without the DUT."""

    frame_bytes: int
    fps: float
    line_fps: float
    trials: list[FrameTrial] = field(default_factory=list)
    lost: int = 0
    spacing: dict[str, object] = field(default_factory=dict)  # the last trial's gaps (spacing_fields)
    source: str = "measured now, the tester's ends joined directly"

    @property
    def limited(self) -> bool:
        """The tester cannot offer the line rate at this size."""
        return self.fps < GENERATOR_TOLERANCE * self.line_fps

    def as_json(self) -> dict[str, object]:
        return {"fps": round(self.fps, 1), "line_fps": round(self.line_fps, 1), "lost": self.lost,
                "spacing": self.spacing}  # fmt: skip


def measure_ceiling(
    pc: TesterEnd, peer: TesterEnd, size: int, link_mbit: float, slow_ns: int, seconds: float
) -> Ceiling:
    """CALIBRATION_TRIALS trials at the line rate from `pc` to `peer`, joined with no device between
    them: the lower of what they sent and what arrived, at most the line rate."""
    line = line_rate_fps(link_mbit, size)
    count = max(2, round(line * seconds))
    trials = [
        run_frames(pc, peer, size, [Phase(line, count)], line_mbps=link_mbit, slow_ns=slow_ns, label="tester")
        for _ in range(CALIBRATION_TRIALS)
    ]
    best = min(min(t.achieved_fps, t.received / t.elapsed_s if t.elapsed_s else 0.0) for t in trials)
    return Ceiling(size, min(best, line), line, trials, sum(t.lost for t in trials), trials[-1].spacing_fields())


def ceilings_table(ceilings: Sequence[Ceiling]) -> str:
    lines = [
        "The frame tester measured without the DUT (its two ends joined directly, the same medium), "
        f"the lower of {CALIBRATION_TRIALS} trials at the line rate; {ceilings[0].source if ceilings else ''}:",
        f"{'frame B':>7s} {'line fps':>10s} {'tester fps':>10s} {'% of line':>9s} {'lost':>6s}"
        "  gap us: even median p95",
    ]
    for c in ceilings:
        sp = c.spacing
        gaps = (
            f"{float(sp['even_gap_us']):7.2f} {float(sp['median_gap_us']):7.2f} {float(sp['p95_gap_us']):7.2f}"  # type: ignore[arg-type]
            if sp
            else "-"
        )
        lines.append(
            f"{c.frame_bytes:7d} {c.line_fps:10.0f} {c.fps:10.0f} {100 * c.fps / c.line_fps:9.1f} {c.lost:6d}  {gaps}"
            + ("  tester below the line rate" if c.limited else "")
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class NicIdentity:
    """Which NIC an end of the tester is: its namespace, interface and link address."""

    netns: str | None
    iface: str
    mac: str

    def text(self) -> str:
        return f"{self.iface} ({self.mac}) in {'namespace ' + self.netns if self.netns else 'the root namespace'}"


def save_ceilings(
    path: Path, ceilings: Sequence[Ceiling], pc: NicIdentity, peer: NicIdentity, link_mbit: float, slow_ns: int
) -> None:
    data = {
        "format": FILE_FORMAT,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "host": socket.gethostname(),
        "pc": pc.__dict__,
        "peer": peer.__dict__,
        "link_mbit": link_mbit,
        "slow_ns": slow_ns,
        "trials": CALIBRATION_TRIALS,
        "ceilings": {str(c.frame_bytes): c.as_json() for c in ceilings},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")


def load_ceilings(
    path: Path, sizes: Sequence[int], pc: NicIdentity, peer: NicIdentity, link_mbit: float, slow_ns: int
) -> dict[int, Ceiling]:
    """The calibration file's ceilings at `sizes`, after checking that it is this bench's: the same
    two NICs, link rate and slowdown, every size measured. Anything else is one ConfigError naming
    what differs and the command that measures them again."""
    again = f"measure them again: {CALIBRATE_COMMAND}"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"tester.ceilings {path}: no such file: the tester is not calibrated; {again}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"tester.ceilings {path}: not a calibration file ({exc}); {again}") from None
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT or not isinstance(data.get("ceilings"), dict):
        raise ConfigError(f"tester.ceilings {path}: not a calibration file of format {FILE_FORMAT}; {again}")
    for name, nic in (("pc", pc), ("peer", peer)):
        if data.get(name) != nic.__dict__:
            raise ConfigError(
                f"tester.ceilings {path}: measured with the {name} end {data.get(name)}, the bench now has "
                f"{nic.text()}; {again}"
            )
    if data.get("link_mbit") != link_mbit or data.get("slow_ns") != slow_ns:
        raise ConfigError(
            f"tester.ceilings {path}: measured at {data.get('link_mbit')} Mbit/s with the generator slowed by "
            f"{data.get('slow_ns')} ns, the run is at {link_mbit:g} Mbit/s and {slow_ns} ns; {again}"
        )
    missing = [s for s in sizes if str(s) not in data["ceilings"]]
    if missing:
        raise ConfigError(
            f"tester.ceilings {path}: no ceiling at {', '.join(map(str, missing))} B; {again} --frame-sizes "
            + ",".join(map(str, sizes))
        )
    source = f"calibrated {data.get('measured_at')} on {data.get('host')} ({path.name}), the two NICs joined by a cable"
    out = {}
    for s in sizes:
        c = data["ceilings"][str(s)]
        try:
            out[s] = Ceiling(s, float(c["fps"]), float(c["line_fps"]), [], int(c.get("lost", 0)),
                             dict(c.get("spacing") or {}), source)  # fmt: skip
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"tester.ceilings {path}: the ceiling at {s} B is not readable; {again}") from None
    return out
