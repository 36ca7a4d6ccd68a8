"""DUT kind `cabled_black_box`: a real device the suite knows nothing of, cabled in the path
between the bench PC's bench NIC and the peer host (a second NIC of the PC in a namespace of its
own, or a remote host over SSH), as most users test their own bridge, router or gateway. No
console, no firmware of the project, no address of the suite's: its health is judged from the
traffic alone (the PC pings the peer through it before every case).

"Flashing" it runs the bench file's `reset` command on the bench PC, if it gives one (a
power-cycle through a relay or a PDU, a USB hub port switched off and on, a vendor's reset tool),
then waits until the device forwards again. Without one the device is used as it is found.
"""

from __future__ import annotations

import hashlib
import subprocess
import time
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from hil.config.sections import DutBase
from hil.console.protocol import FinalLine
from hil.dut.adapter import BenchLink
from hil.dut.consoleless import ConsolelessDut
from hil.dut.kinds import register_kind
from hil.dut.section import KindSection
from hil.errors import BenchError, DutError
from hil.plumbing.hardware_link import HardwareLink
from hil.plumbing.in_path import InPathMode
from hil.plumbing.proc import start_logged, stop_process
from hil.tools.ping import ping_argv

FORWARD_PROBE_INTERVAL_S = 0.5


class CabledBlackBoxConfig(KindSection):
    """`kind: cabled_black_box`: a device cabled between the PC's bench NIC and the peer."""

    FLASHERS: ClassVar[tuple[str, ...]] = ("reset",)
    LOCAL: ClassVar[bool] = False
    IN_PATH: ClassVar[bool] = True
    IN_PATH_MODE: ClassVar[str] = InPathMode.BLACK_BOX
    HAS_CONSOLE: ClassVar[bool] = False

    kind: Literal["cabled_black_box"]
    role: Literal["in_path"] = "in_path"
    description: Annotated[str, Field(min_length=1, max_length=200)] = "a device cabled in the path"
    reset: str | None = None  # run on the bench PC (shell) before the run: power-cycle, reset
    reset_timeout_s: Annotated[float, Field(gt=0, le=600)] = 60.0  # the command, then forwarding again

    @model_validator(mode="after")
    def _real_link(self) -> CabledBlackBoxConfig:
        if self.link.shaping or self.link.loss_pct:
            raise ValueError("a cabled DUT runs on the real link: set link.shaping false and loss_pct 0")
        return self


class CabledBlackBox(ConsolelessDut):
    cfg: CabledBlackBoxConfig
    default_config = "default"  # it has no builds: the bench file's only "configuration" (one reset a run)

    def __init__(self, cfg: CabledBlackBoxConfig, link: HardwareLink, workdir: Path) -> None:
        self.cfg = cfg
        self.link = link
        self.workdir = workdir
        self.flash_count = 0
        self.flashed: tuple[Path, ...] = ()  # the files last written to the DUT (its build's identity)
        self.current_config: str | None = None
        self.reset_seconds: float | None = None

    @property
    def pid(self) -> None:
        return None

    def flash(self, config: str | None = None) -> None:
        """Runs the reset command (if any) and waits until the PC reaches the peer through the DUT."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        if self.cfg.reset:
            self._run_reset(self.cfg.reset)
        self._wait_forwarding(started + self.cfg.reset_timeout_s)
        self.reset_seconds = round(time.monotonic() - started, 2)
        self.current_config = config or self.default_config
        self.flash_count += 1

    @property
    def can_reset(self) -> bool:
        return self.cfg.reset is not None

    def reset_device(self) -> None:
        """Runs the bench file's `reset` command while traffic runs (RFC 6201's reset): the frames
        lost until the device forwards again are its reset time."""
        if self.cfg.reset is None:
            raise DutError(f"DUT {self.cfg.name}: the bench file gives no `reset` command")
        self._run_reset(self.cfg.reset)

    def _run_reset(self, command: str) -> None:
        log = self.workdir / "reset.log"
        proc = start_logged(["sh", "-c", command], log, "the DUT's reset command")
        try:
            code = proc.wait(timeout=self.cfg.reset_timeout_s)
        except subprocess.TimeoutExpired:
            stop_process(proc)
            raise BenchError(f"the DUT's reset command did not finish within {self.cfg.reset_timeout_s:g} s") from None
        if code != 0:
            tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:]) or "no output"
            raise BenchError(f"the DUT's reset command failed ({code}): {tail}")

    def _wait_forwarding(self, deadline: float) -> None:
        assert self.cfg.peer is not None
        argv = ping_argv(self.link.exec_prefix(self.link.pc_ns), self.cfg.peer.ip, count=1, interval_s=None)
        while True:
            if subprocess.run(argv, capture_output=True, timeout=10, check=False).returncode == 0:
                return
            if time.monotonic() >= deadline:
                raise DutError(
                    f"the DUT does not forward: the PC does not reach the peer {self.cfg.peer.ip} through it "
                    f"within {self.cfg.reset_timeout_s:g} s"
                )
            time.sleep(FORWARD_PROBE_INTERVAL_S)

    def alive(self) -> bool:
        """Nothing of it runs on the bench PC: whether it forwards, the traffic tells."""
        return self.flash_count > 0

    def exit_code(self) -> None:
        return None

    def process_log(self) -> str:
        path = self.workdir / "reset.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def identity(self) -> FinalLine:
        """What the report says the DUT is: the bench file's description, and its reset command."""
        digest = hashlib.sha256(f"{self.cfg.description}\n{self.cfg.reset or ''}".encode()).hexdigest()[:12]
        return FinalLine("BOOT", "identity", {"name": "black box", "version": digest, "target": self.cfg.description,
                                              "variant": str(self.cfg.IN_PATH_MODE), "role": "in_path"})  # fmt: skip

    def environment(self) -> dict[str, str]:
        reset = (
            f"reset by `{self.cfg.reset}` ({self.reset_seconds} s until it forwarded)" if self.cfg.reset else "no reset"
        )
        return {"Black_box": f"{self.cfg.description}; cabled between the bench NIC and the peer; {reset}"}

    def stop(self) -> None:
        """Nothing to stop: the device stays as it is."""


@register_kind(CabledBlackBoxConfig)
def _make(cfg: DutBase, link: BenchLink, workdir: Path) -> CabledBlackBox:
    assert isinstance(cfg, CabledBlackBoxConfig)
    if not isinstance(link, HardwareLink):
        raise DutError(f"DUT {cfg.name}: a cabled black box runs on the bench's real NICs")
    return CabledBlackBox(cfg, link, workdir)
