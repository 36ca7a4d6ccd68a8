"""A DUT that is a Wi-Fi station (an ESP32 board; the host DUT next to its simulated access point):
it joins the bench file's access point before every test, in its firmware's dialect (the
driver's `join_wifi`: hil.console.dialects), and the association it reported is recorded with
every result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from hil.config.sections import NetworkConfig, WifiConfig

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
        """The Wi-Fi connect step (with retries); None when the bench file gives no access point."""
        if self.cfg.wifi is None:
            return None
        self.wifi = driver.join_wifi(self.cfg.wifi, self.cfg.network, self.wifi)
        return self.wifi
