"""The registry of DUT kinds. A kind is one module of hil.dut (its bench section, its adapter,
its `KIND`); adding one means writing that module and listing its KIND here. The bench file's
DUT section is the union of the kinds' sections, told apart by `kind`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Union

from pydantic import Field

from hil.config.sections import DutBase
from hil.dut import black_box, cabled_black_box, esp32, preflashed, qemu, same70, virtual
from hil.dut.adapter import BenchLink, DutAdapter, DutKind

KINDS: dict[str, DutKind] = {
    k.name: k
    for k in (virtual.KIND, qemu.KIND, same70.KIND, esp32.KIND, black_box.KIND, cabled_black_box.KIND, preflashed.KIND)
}

# the bench file's DUT section: one model per kind, chosen by its `kind` tag
DutSection = Annotated[Union[tuple(k.config for k in KINDS.values())], Field(discriminator="kind")]  # noqa: UP007


def make_adapter(cfg: DutBase, link: BenchLink, workdir: Path) -> DutAdapter:
    """The adapter of a DUT's kind, on the bench's link."""
    return KINDS[cfg.kind].make(cfg, link, workdir)
