"""The console dialects' drivers by name (the bench file's `console.dialect`)."""

from __future__ import annotations

from collections.abc import Callable

from hil.console.dialects.base import DialectDriver
from hil.console.dialects.espressif import EspressifDriver
from hil.console.dialects.hil_fw import HilFwDriver
from hil.console.dialects.zephyr import ZperfDriver
from hil.console.driver import ConsoleDriver

DRIVERS: dict[str, Callable[[ConsoleDriver], DialectDriver]] = {
    "hil-fw": HilFwDriver,
    "espressif-iperf": EspressifDriver,
    "zephyr-zperf": ZperfDriver,
}


def make_driver(dialect: str, console: ConsoleDriver) -> DialectDriver:
    return DRIVERS[dialect](console)
