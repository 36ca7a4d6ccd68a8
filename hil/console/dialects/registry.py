"""The console dialects by name (the bench file's `console.dialect`). A dialect registers itself
where it is defined: its driver class carries its `DialectInfo` (`info`) and is decorated with
`@register_dialect`. The registry finds those modules by itself (it imports every module of this
package once, on its first question), so a new dialect is its own files and nothing else."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from hil.plugins import import_all

if TYPE_CHECKING:
    from hil.console.dialects.base import DialectDriver
    from hil.console.dialects.capabilities import DialectInfo
    from hil.console.driver import ConsoleDriver

DriverClass = TypeVar("DriverClass", bound=Callable[..., object])

_DRIVERS: dict[str, Callable[[ConsoleDriver], DialectDriver]] = {}
_INFO: dict[str, DialectInfo] = {}


def register_dialect(driver: DriverClass) -> DriverClass:
    """Class decorator: the driver of the dialect its `info` names (made with the DUT's console)."""
    info: DialectInfo = driver.info  # type: ignore[attr-defined]
    if _DRIVERS.get(info.name, driver) is not driver:
        raise RuntimeError(f"console dialect {info.name!r} is registered twice ({_DRIVERS[info.name]} and {driver})")
    _DRIVERS[info.name] = driver  # type: ignore[assignment]
    _INFO[info.name] = info
    return driver


def dialects() -> dict[str, DialectInfo]:
    """Every dialect by name: the project's firmware's first, then the stock ones by name."""
    import_all("hil.console.dialects")
    return {name: _INFO[name] for name in sorted(_INFO, key=lambda n: (_INFO[n].stock, n))}


def dialect_info(name: str) -> DialectInfo:
    return dialects()[name]


def project_dialect() -> str:
    """The dialect of the project's own firmware (a bench file's default)."""
    return next(name for name, info in dialects().items() if not info.stock)


def dialect_driver(name: str) -> Callable[[ConsoleDriver], DialectDriver]:
    """The driver class of a dialect (called with the DUT's console)."""
    import_all("hil.console.dialects")
    return _DRIVERS[name]


def make_driver(dialect: str, console: ConsoleDriver) -> DialectDriver:
    return dialect_driver(dialect)(console)
