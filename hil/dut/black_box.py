"""DUT kind `black_box`: a device the suite knows nothing of but that it forwards between its two
ports: no console, no firmware of the project. On the virtual bench it is whatever the bench
file names, run in the DUT namespace with the two port names as `$1` (PC side) and `$2` (peer
side): a `setup` command run once (e.g. a Linux bridge of the kernel) and/or a `program` that
forwards while it runs (a user's own emulator or simulator). Its health is judged from the
traffic alone: the PC pings the peer through it before every case; a program that exited is a
DUT fault, and the next case starts it again ("flashing" a black box starts its program). Both
commands see `$HIL_ROOT`, the project's root (e.g. the RFC 2544 family's model device,
tester/build/modelbox); a `reset` command, where the bench file gives one, resets the device for
RFC 6201's reset time, with `$PROGRAM_PID` the program's process id."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, model_validator

from hil.config.sections import DutBase
from hil.console.protocol import FinalLine
from hil.dut.adapter import BenchLink
from hil.dut.consoleless import ConsolelessDut
from hil.dut.kinds import register_kind
from hil.dut.local import virtual_topology
from hil.dut.section import KindSection
from hil.errors import DutError
from hil.paths import PROJECT_ROOT
from hil.plumbing.in_path import InPathMode, InPathTopology
from hil.plumbing.proc import start_logged, stop_process


class BlackBoxConfig(KindSection):
    """`kind: black_box`: forwards between the PC and the peer; `setup` and/or `program` are shell
    commands run in the DUT namespace with `$1`/`$2` the PC-side and peer-side ports."""

    FLASHERS: ClassVar[tuple[str, ...]] = ("command",)
    LOCAL: ClassVar[bool] = True
    IN_PATH: ClassVar[bool] = True
    IN_PATH_MODE: ClassVar[str] = InPathMode.BLACK_BOX  # the bare ports: nothing of the suite's between them
    HAS_CONSOLE: ClassVar[bool] = False
    CPU_PLAN: ClassVar[bool] = False  # no firmware of ours: the bench keeps every core (the frame tester's sender one)

    kind: Literal["black_box"]
    role: Literal["in_path"] = "in_path"
    setup: str | None = None  # run once when the bench is up; must exit 0
    program: str | None = None  # runs while the DUT is up; its exit is a DUT fault
    setup_timeout_s: float = Field(default=30.0, gt=0, le=600)
    # resets the device (RFC 6201's reset time): a shell command run in the DUT namespace with
    # $PROGRAM_PID the program's process id, e.g. `kill -USR1 "$PROGRAM_PID"`
    reset: str | None = None

    @model_validator(mode="after")
    def _something_forwards(self) -> BlackBoxConfig:
        if not (self.setup or self.program):
            raise ValueError("a black_box DUT needs `setup` (a command) and/or `program` (what forwards)")
        return self


class BlackBoxDut(ConsolelessDut):
    cfg: BlackBoxConfig
    default_config = "black_box"

    def __init__(self, cfg: BlackBoxConfig, topology: InPathTopology, workdir: Path) -> None:
        self.cfg = cfg
        self.topology = topology
        self.workdir = workdir
        self.flash_count = 0
        self.flashed: tuple[Path, ...] = ()  # the files last written to the DUT (its build's identity)
        self.current_config: str | None = None
        self._set_up = False
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def flash(self, config: str | None = None) -> None:
        """Runs `setup` once, then (re)starts `program`."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.cfg.setup and not self._set_up:
            self.topology.run_in_dut(self.cfg.setup, self.cfg.setup_timeout_s)
            self._set_up = True
        self.stop_program()
        if self.cfg.program:
            argv = [*self.topology.exec_prefix(self.topology.dut_ns), "sh", "-c", self.cfg.program, "sh",
                    *self.topology.ports]  # fmt: skip
            env = {**os.environ, "HIL_ROOT": str(PROJECT_ROOT)}
            self._proc = start_logged(argv, self.workdir / "black-box.log", "black-box DUT program", env=env)
        self.current_config = config or self.default_config
        self.flash_count += 1

    @property
    def can_reset(self) -> bool:
        return self.cfg.reset is not None

    def reset_device(self) -> None:
        """Runs the bench file's `reset` command (RFC 6201's reset); the program must still run."""
        if self.cfg.reset is None:
            raise DutError(f"DUT {self.cfg.name}: the bench file gives no `reset` command")
        env = {"HIL_ROOT": str(PROJECT_ROOT), "PROGRAM_PID": str(self.pid or "")}
        self.topology.run_in_dut(self.cfg.reset, 10.0, env=env)

    def alive(self) -> bool:
        if self.cfg.program:
            return self._proc is not None and self._proc.poll() is None
        return self._set_up

    def exit_code(self) -> int | None:
        return self._proc.poll() if self._proc is not None else None

    def process_log(self) -> str:
        path = self.workdir / "black-box.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def identity(self) -> FinalLine:
        """What the report says the DUT is: the commands that make it, by their hash and text."""
        text = f"{self.cfg.setup or ''}\n{self.cfg.program or ''}"
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        what = "; ".join(f"{k}: {v}" for k, v in (("setup", self.cfg.setup), ("program", self.cfg.program)) if v)
        return FinalLine("BOOT", "identity", {"name": "black box", "version": digest, "target": what,
                                              "variant": str(self.cfg.IN_PATH_MODE), "role": "in_path"})  # fmt: skip

    def environment(self) -> dict[str, str]:
        return {"Black_box": self.identity().fields["target"]}

    def stop_program(self) -> None:
        if self._proc is not None:
            stop_process(self._proc)
            self._proc = None

    def stop(self) -> None:
        self.stop_program()


@register_kind(BlackBoxConfig)
def _make(cfg: DutBase, link: BenchLink, workdir: Path) -> BlackBoxDut:
    assert isinstance(cfg, BlackBoxConfig)
    topology = virtual_topology(link, cfg)
    if not isinstance(topology, InPathTopology):
        raise DutError(f"DUT {cfg.name}: a black box sits in the path (role in_path)")
    return BlackBoxDut(cfg, topology, workdir)
