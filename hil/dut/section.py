"""What every DUT kind's bench section extends: hil.config.sections.DutBase (what every DUT
section has) with what needs the registries above the configuration layer - the console's
dialect, a name of the console dialects' registry that the kind's firmware must speak, and role
in_path, which only the kinds that forward between two ports take (hil.dut.kinds)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator, model_validator

from hil.config.sections import ConsoleConfig, DutBase
from hil.console.dialects.capabilities import DialectInfo
from hil.console.dialects.registry import dialect_info, dialects, project_dialect
from hil.dut.kinds import kinds


def _one_of(names: tuple[str, ...]) -> str:
    """'a', 'b' or 'c' (as pydantic names the values of a Literal)."""
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


class DutConsole(ConsoleConfig):
    """The console section, its dialect one of the registry's (default: the project's firmware's)."""

    dialect: str = Field(default_factory=project_dialect)

    @field_validator("dialect")
    @classmethod
    def _registered(cls, v: str) -> str:
        names = tuple(dialects())
        if v not in names:
            raise ValueError(f"Input should be {_one_of(names)}")
        return v


class KindSection(DutBase):
    """A kind's bench section. Its firmware speaks the project's dialect and those of the stock
    firmware of the SDKs in `STOCK_SDKS` (a dialect's `sdk`: hil.console.dialects.capabilities);
    a kind that runs something else says so in `speaks`."""

    STOCK_SDKS: ClassVar[frozenset[str]] = frozenset()  # e.g. {"zephyr"}: it flashes Zephyr's images
    SIMULATED_RADIO: ClassVar[bool] = False  # its Wi-Fi station's radio follows a virtual attenuator

    console: DutConsole = Field(default_factory=DutConsole)

    @classmethod
    def speaks(cls, info: DialectInfo) -> bool:
        """Whether the kind's firmware may speak a dialect."""
        return not info.stock or info.sdk in cls.STOCK_SDKS

    @classmethod
    def dialects(cls) -> tuple[str, ...]:
        """The console dialects the kind's firmware may speak."""
        return tuple(name for name, info in dialects().items() if cls.speaks(info))

    @model_validator(mode="after")
    def _fits_the_kind(self) -> KindSection:
        fits = self.dialects()
        if self.console.dialect not in fits:
            raise ValueError(
                f"console.dialect {self.console.dialect!r} does not fit kind {self.kind!r} "
                f"(it speaks {' or '.join(fits)})"
            )
        if self.role == "in_path" and not self.IN_PATH:
            forwarding = ", ".join(name for name, kind in kinds().items() if kind.config.IN_PATH)
            raise ValueError(f"kind {self.kind!r} cannot be put in the path (role in_path: kinds {forwarding})")
        wifi = getattr(self, "wifi", None)
        if wifi is not None and wifi.attenuator is not None and wifi.attenuator.virtual and not self.SIMULATED_RADIO:
            raise ValueError(
                f"wifi.attenuator.virtual: only the host firmware's simulated station has a virtual attenuator; "
                f"kind {self.kind!r} needs the unit's command: (a template with {{db}})"
            )
        return self

    @property
    def dialect(self) -> DialectInfo:
        """What the console's dialect can do."""
        return dialect_info(self.console.dialect)

    @property
    def stock_firmware(self) -> bool:
        """The DUT runs stock test firmware (Espressif's iperf example, Zephyr's zperf), not the project's."""
        return self.dialect.stock
