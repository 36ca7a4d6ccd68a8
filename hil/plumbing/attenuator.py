"""The RF attenuator between the access point and a Wi-Fi DUT, as a bench resource with one driver
per kind of unit: a command template the unit's own tool runs (USB, serial and HTTP units all come
with one), or the virtual attenuator, which writes the attenuation where the host firmware's
radio model reads it (firmware/host/src/wifi_air.h). The AP's transmit power is an optional second
knob, also a command. `held()` sets the start value, and restores it when the sweep ends, however
it ends: an exception, Ctrl-C, SIGTERM (which the suite turns into KeyboardInterrupt)."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from hil.config.attenuator import AttenuatorConfig
from hil.errors import BenchError
from hil.radio_model import AP_DBM_DEFAULT


class Attenuator(Protocol):
    def set(self, db: float) -> None: ...
    def describe(self) -> str: ...


def _number(value: float) -> str:
    return f"{value:g}"


def run_template(template: str, what: str, timeout_s: float, **values: str) -> None:
    """Runs a command template, each `{name}` replaced inside its argument (no shell); a failure is
    a BenchError naming the command and what it printed."""
    try:
        argv = shlex.split(template)
    except ValueError as exc:
        raise BenchError(f"{what}: the command template {template!r} does not parse: {exc}") from None
    for name, value in values.items():
        argv = [arg.replace("{" + name + "}", value) for arg in argv]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError:
        raise BenchError(f"{what}: {argv[0]!r} is not installed or not on PATH ({shlex.join(argv)})") from None
    except subprocess.TimeoutExpired:
        raise BenchError(f"{what}: `{shlex.join(argv)}` did not finish within {timeout_s:g} s") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise BenchError(
            f"{what}: `{shlex.join(argv)}` failed with exit code {done.returncode}"
            + (f": {said[-1][:300]}" if said else "")
        )


class CommandAttenuator:
    """A unit driven by its own tool: `command` with {db} replaced."""

    def __init__(self, cfg: AttenuatorConfig) -> None:
        assert cfg.command is not None
        self.cfg = cfg
        self.template = cfg.command

    def set(self, db: float) -> None:
        run_template(self.template, "the attenuator", self.cfg.timeout_s, db=_number(db))

    def describe(self) -> str:
        return f"`{self.template}`"


class VirtualAttenuator:
    """The host firmware's radio model's attenuator: "ATTENUATION_DB AP_DBM" in a file the firmware
    reads every 20 ms (written whole, by rename: it never reads half a value)."""

    def __init__(self, path: Path, ap_dbm: float = AP_DBM_DEFAULT) -> None:
        self.path = path
        self.ap_dbm = ap_dbm

    def set(self, db: float) -> None:
        tmp = self.path.with_name(self.path.name + ".new")
        tmp.write_text(f"{_number(db)} {_number(self.ap_dbm)}\n")
        os.replace(tmp, self.path)

    def describe(self) -> str:
        return f"the virtual attenuator ({self.path})"


def attenuator_for(cfg: AttenuatorConfig, air_file: Path | None) -> Attenuator:
    if cfg.virtual:
        if air_file is None:
            raise BenchError("wifi.attenuator.virtual: the DUT is not the host firmware's simulated station")
        return VirtualAttenuator(air_file)
    return CommandAttenuator(cfg)


@contextmanager
def held(cfg: AttenuatorConfig, air_file: Path | None) -> Iterator[Attenuator]:
    """The attenuator at its start value (and the AP at its power) for a sweep; back at the start
    value afterwards, whatever ended the sweep."""
    unit = attenuator_for(cfg, air_file)
    if cfg.ap_tx_power is not None:
        p = cfg.ap_tx_power
        run_template(p.command, "the AP's transmit power", cfg.timeout_s,
                     dbm=_number(p.dbm), mbm=str(round(p.dbm * 100)))  # fmt: skip
    unit.set(cfg.start)
    try:
        yield unit
    finally:
        unit.set(cfg.start)


def main(argv: list[str] | None = None) -> int:
    """`python -m hil.plumbing.attenuator FILE DB [AP_DBM]`: the virtual attenuator by hand (the
    host firmware run with --wifi-air FILE follows it)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m hil.plumbing.attenuator", description=main.__doc__)
    parser.add_argument("file", type=Path)
    parser.add_argument("db", type=float)
    parser.add_argument("ap_dbm", type=float, nargs="?", default=AP_DBM_DEFAULT)
    args = parser.parse_args(argv)
    if not 0 <= args.db <= 200 or not -30 <= args.ap_dbm <= 40:
        parser.error("DB must be 0..200 and AP_DBM -30..40")
    VirtualAttenuator(args.file, args.ap_dbm).set(args.db)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
