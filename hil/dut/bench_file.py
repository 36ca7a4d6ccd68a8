"""The bench file: the PC, the DUTs (each in its kind's own section, chosen by `kind`: the kinds'
registry, hil.dut.kinds), the secrets.

Secrets (Wi-Fi passwords) are never written in the file: a key ending in ``_env`` names the
environment variable that holds the value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, model_validator

from hil.config.errors import load_model
from hil.config.sections import PcConfig, SecretRef, Strict
from hil.dut.kinds import dut_section, kinds
from hil.paths import PROJECT_ROOT

DEFAULT_BENCH_FILE = PROJECT_ROOT / "bench" / "virtual.yaml"

DutSection = dut_section()  # the bench file's DUT entry: one model per kind, chosen by its `kind` tag


class BenchConfig(Strict):
    name: str = "bench"
    pc: PcConfig = PcConfig()
    duts: Annotated[list[DutSection], Field(min_length=1)]  # type: ignore[valid-type]
    secrets: list[SecretRef] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> BenchConfig:
        names = [d.name for d in self.duts]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate DUT names: {', '.join(sorted(dup))}")
        return self


def load_bench(path: Path) -> BenchConfig:
    # a kind's section is reported as duts[0].link..., not duts[0].virtual.link...
    return load_model(path, BenchConfig, "a mapping with a `duts` list at the top level", hide_tags=set(kinds()))
