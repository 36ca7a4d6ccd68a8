"""A DUT that is a Wi-Fi station (an ESP32 board; the host DUT next to its simulated access point,
or next to the SoftAP of its pair): it joins the bench file's access point before every test, or
a SoftAP (`wifi.mode: softap`) starts it, in its firmware's dialect (the
driver's `join_wifi`: hil.console.dialects), and the association it reported is recorded with
every result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from hil.config.sections import NetworkConfig, WifiConfig
from hil.errors import DutError

if TYPE_CHECKING:
    from hil.console.dialects.base import DialectDriver, LinkFacts


class WifiDutConfig(Protocol):
    name: str
    network: NetworkConfig
    wifi: WifiConfig | None


class WifiStation:
    """Joins the access point of the DUT's `wifi:` section; a DUT section without one has nothing
    to join. `wifi` is what the DUT reported since it was last flashed (a flash sets it None)."""

    cfg: WifiDutConfig
    wifi: LinkFacts | None = None

    def associate(self, driver: DialectDriver) -> LinkFacts | None:
        """The Wi-Fi connect step (with retries), or the SoftAP started (`mode: softap`, the access
        point of a Wi-Fi pair); None when the bench file gives no access point."""
        if self.cfg.wifi is None:
            return None
        if self.cfg.wifi.mode == "softap":
            start = getattr(driver, "start_softap", None)
            if start is None:
                raise DutError(f"DUT {self.cfg.name}: console dialect {driver.info.name!r} has no SoftAP command")
            self.wifi = start(self.cfg.wifi, self.cfg.network)
        else:
            self.wifi = driver.join_wifi(self.cfg.wifi, self.cfg.network, self.wifi)
        return self.wifi
