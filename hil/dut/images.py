"""The firmware image a DUT is flashed with: the bench file's image path, or a build
configuration of the project's firmware, built on demand (one build directory per config)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from hil.config.errors import ConfigError
from hil.config.sections import DutBase
from hil.errors import BenchError


class ImageSource:
    """Resolves a configuration name to an image file, building it with `script <prefix><config>`
    when it does not exist yet."""

    def __init__(self, cfg: DutBase, script: Path, preset_prefix: str, built_path: Callable[[str], Path]) -> None:
        self.cfg = cfg
        self.script = script
        self.preset_prefix = preset_prefix
        self.built_path = built_path

    @property
    def default_config(self) -> str:
        return self.cfg.firmware.config or "default"

    def image(self, config: str | None = None) -> Path:
        fw = self.cfg.firmware
        if fw.image is not None and config in (None, self.default_config):
            if not fw.image.is_file():
                raise ConfigError(f"DUT {self.cfg.name}: firmware image {fw.image} does not exist")
            return fw.image
        config = config or self.default_config
        path = self.built_path(config)
        if not path.is_file():
            self._build(config)
        return path

    def _build(self, config: str) -> None:
        preset = f"{self.preset_prefix}{config}"
        proc = subprocess.run([str(self.script), preset], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            reason = next((ln for ln in lines if "No such preset" in ln or "error" in ln.lower()), None)
            raise BenchError(
                f"DUT {self.cfg.name}: building firmware config {config!r} (preset {preset}) failed: "
                f"{(reason or (lines[-1] if lines else 'no output')).strip()}"
            )
