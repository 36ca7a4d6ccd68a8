"""The bench file: the PC, the DUTs (each in its kind's own section, chosen by `kind`: the kinds'
registry, hil.dut.kinds).

The one secret a bench has, a Wi-Fi passphrase, is never written in the file: `wifi.psk_env`
names the environment variable that holds it (SSH keys are files the bench file names).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, model_validator

from hil.config.errors import load_model
from hil.config.sections import PcConfig, Strict
from hil.dut.kinds import dut_section, kinds
from hil.paths import PROJECT_ROOT

DEFAULT_BENCH_FILE = PROJECT_ROOT / "bench" / "virtual.yaml"

DutSection = dut_section()  # the bench file's DUT entry: one model per kind, chosen by its `kind` tag


class BenchConfig(Strict):
    name: str = "bench"
    pc: PcConfig = PcConfig()
    duts: Annotated[list[DutSection], Field(min_length=1)]  # type: ignore[valid-type]

    @model_validator(mode="before")
    @classmethod
    def _no_secrets_list(cls, data: object) -> object:
        if isinstance(data, dict) and "secrets" in data:
            raise ValueError(
                "secrets: is gone: the Wi-Fi passphrase comes from the one environment variable the DUT's "
                "wifi.psk_env names (docs/benches.md); remove the `secrets:` list"
            )
        return data

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
