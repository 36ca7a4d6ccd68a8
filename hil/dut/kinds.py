"""The registry of DUT kinds. A kind registers itself where it is defined: its module decorates
the function that makes its adapter with `@register_kind(<its bench section>)`, and the kind's
name is its section's `kind` tag (`kind: Literal["<name>"]`). The registry finds the kinds'
modules by itself (it imports every module of hil.dut once, on its first question), so a new kind
is one module and nothing else. The bench file's DUT entry is the union of the kinds' sections,
told apart by `kind`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal, TypeVar, Union, get_args, get_origin

from pydantic import Field

from hil.config.sections import DutBase
from hil.dut.adapter import BenchLink, DutAdapter, DutKind
from hil.plugins import import_all

MakeAdapter = TypeVar("MakeAdapter", bound=Callable[..., DutAdapter])

_KINDS: dict[str, DutKind] = {}


def _tag(section: type[DutBase]) -> str:
    """The kind's name: its section's `kind: Literal["<name>"]`."""
    annotation = section.model_fields["kind"].annotation
    names = get_args(annotation)
    if get_origin(annotation) is not Literal or len(names) != 1:
        raise TypeError(f"{section.__name__}.kind must be Literal['<the kind's name>'] (it is {annotation})")
    return str(names[0])


def register_kind(section: type[DutBase]) -> Callable[[MakeAdapter], MakeAdapter]:
    """Decorates `make(cfg, link, workdir)`, the function that makes a kind's adapter on the bench's
    link, and registers the kind of the bench section `section`."""
    name = _tag(section)

    def register(make: MakeAdapter) -> MakeAdapter:
        known = _KINDS.get(name)
        if known is not None and known.config is not section:
            raise RuntimeError(f"DUT kind {name!r} is registered twice ({known.config} and {section})")
        _KINDS[name] = DutKind(name, section, make)
        return make

    return register


def kinds() -> dict[str, DutKind]:
    """Every DUT kind, by name."""
    import_all("hil.dut")
    return {name: _KINDS[name] for name in sorted(_KINDS)}


def dut_section() -> object:
    """The bench file's DUT entry: one section per kind, chosen by its `kind` tag."""
    sections = tuple(k.config for k in kinds().values())
    return Annotated[Union[sections], Field(discriminator="kind")]  # noqa: UP007


def make_adapter(cfg: DutBase, link: BenchLink, workdir: Path) -> DutAdapter:
    """The adapter of a DUT's kind, on the bench's link."""
    return kinds()[cfg.kind].make(cfg, link, workdir)
