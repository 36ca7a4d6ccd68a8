"""The Wi-Fi join of ESP-IDF's iperf example, as that example spells it: `sta <ssid> [<pass>]`
(ESP-IDF v4.x - v5.2, `cmd_wifi.c`) or `sta_connect <ssid> [<pass>]` (esp-qa/wifi-cmd, v5.3+),
after a `scan <ssid>` / `sta_scan <ssid>` that gives the AP's RSSI (as ESP-IDF's own CI reads it).
Success is esp_netif's `sta ip: A, mask: M, gw: G` line; the address must be the bench file's (the
example takes it from the AP's DHCP: reserve it there). The PSK is written to the serial port only;
messages name the command `sta_connect <ssid> <psk hidden>`.

The SoftAP of a Wi-Fi pair: `ap <ssid> [<pass>]` (v4.x - v5.2's `cmd_wifi.c`), at the default AP
netif's address; the example logs `AP mode, <ssid> <pass>`, the passphrase in the clear, even when
it refused it (`password less than 8`): the line is read, never quoted (the console's log is
written without secrets, hil.evidence)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hil.config.sections import NetworkConfig, WifiConfig
from hil.console.dialects import espressif_format as fmt
from hil.console.dialects.base import quiet_read
from hil.errors import DutError

if TYPE_CHECKING:
    from hil.console.dialects.espressif import EspressifDriver

SCAN_S = 10.0
RETRY_PAUSE_S = 2.0


@dataclass(frozen=True)
class EspWifiLink:
    """What the example tells of its association: the SSID, the AP's RSSI from the scan, the
    address it got."""

    ssid: str
    rssi_dbm: int | None
    ip: str
    attempts: int
    command: str

    def describe(self) -> str:
        rssi = f"RSSI {self.rssi_dbm} dBm (scan)" if self.rssi_dbm is not None else "RSSI not reported"
        return f"{self.ssid}, {rssi}, address {self.ip}, joined with `{self.command}`"

    def as_fields(self) -> dict[str, object]:
        return {"wifi_ssid": self.ssid, "wifi_rssi_dbm": self.rssi_dbm, "wifi_ip": self.ip}


def scan(driver: EspressifDriver, ssid: str) -> int | None:
    """The AP's RSSI from the example's scan command (None: no scan command, or the AP not seen)."""
    command = next((c for c in ("sta_scan", "scan") if c in driver.commands), None)
    if command is None:
        return None
    driver.console.send(f"{command} {ssid}")

    def done(lines: list[str]) -> bool:
        return fmt.scan_rssi(lines, ssid) is not None or any(
            t in fmt.message(x) for x in lines for t in ("sta scan done", "SCAN_DONE", "No AP found")
        )

    return fmt.scan_rssi(quiet_read(driver.console, 2.0, SCAN_S, done), ssid)


@dataclass(frozen=True)
class EspSoftAp:
    """The SoftAP the example runs (one end of a Wi-Fi pair): what it tells of it, its SSID."""

    ssid: str
    secured: bool
    ip: str

    def describe(self) -> str:
        return f"SoftAP {self.ssid}, {'WPA2-PSK' if self.secured else 'open'}, address {self.ip}, started with `ap`"

    def as_fields(self) -> dict[str, object]:
        return {"wifi_mode": "softap", "wifi_ssid": self.ssid, "wifi_auth": "wpa2" if self.secured else "open"}


AP_QUIET_S = 1.0
AP_LIMIT_S = 5.0


def start_ap(driver: EspressifDriver, wifi: WifiConfig, net: NetworkConfig) -> EspSoftAp:
    """`ap <ssid> <psk>`: the SoftAP of a Wi-Fi pair. DutError naming the command (never the
    PSK) when the firmware has no `ap`, refuses the passphrase, or says nothing of it."""
    if "ap" not in driver.commands:
        raise DutError(
            "the DUT's firmware lists no `ap` command (ESP-IDF's iperf example has it in v4.x - v5.2's cmd_wifi.c): "
            "it cannot be the SoftAP of a Wi-Fi pair"
        )
    psk = wifi.psk()
    label = f"ap {wifi.ssid} <psk hidden>" if psk else f"ap {wifi.ssid}"
    driver.console.send(f"ap {wifi.ssid} {psk}".rstrip())

    def said(lines: list[str]) -> bool:
        return any(fmt.message(x).startswith("AP mode, ") for x in lines)

    lines = quiet_read(driver.console, AP_QUIET_S, AP_LIMIT_S, said)
    if any("password less than 8" in fmt.message(x) for x in lines):
        raise DutError(f"`{label}`: the example refused the passphrase (password less than 8)")
    if not said(lines):
        raise DutError(f"`{label}`: no `AP mode, {wifi.ssid} ...` line within {AP_LIMIT_S:g} s")
    return EspSoftAp(wifi.ssid, bool(psk), net.dut_ip)


def join(driver: EspressifDriver, wifi: WifiConfig, net: NetworkConfig) -> EspWifiLink:
    """Scans for the AP, then joins it (wifi.connect_attempts tries); DutError naming the last
    reason, never the PSK."""
    rssi = scan(driver, wifi.ssid)
    command = "sta_connect" if "sta_connect" in driver.commands else "sta"
    if command not in driver.commands:
        raise DutError("the DUT's firmware lists neither `sta_connect` nor `sta`: is this the Wi-Fi iperf example?")
    psk = wifi.psk()
    label = f"{command} {wifi.ssid} <psk hidden>"
    reason = ""
    for attempt in range(1, wifi.connect_attempts + 1):
        driver.console.send(f"{command} {wifi.ssid} {psk}".rstrip())

        def settled(lines: list[str]) -> bool:
            return fmt.sta_ip(lines) is not None or fmt.join_gave_up(lines) is not None

        lines = quiet_read(driver.console, wifi.connect_timeout_s, wifi.connect_timeout_s, settled)
        if (ip := fmt.sta_ip(lines)) is not None:
            if ip != net.dut_ip:
                raise DutError(
                    f"`{label}`: the AP gave the DUT {ip}, the bench file says {net.dut_ip} "
                    "(reserve that address for the board's MAC on the AP's DHCP server)"
                )
            return EspWifiLink(wifi.ssid, rssi, ip, attempt, label)
        reason = fmt.join_gave_up(lines) or (
            f"no `sta ip:` line within {wifi.connect_timeout_s:g} s"
            + (f" (last: {last})" if (last := fmt.join_last_reason(lines)) else "")
        )
        if "sta_disconnect" in driver.commands:
            driver.console.send("sta_disconnect")
            quiet_read(driver.console, 1.0, 5.0, lambda _: False)
        if attempt < wifi.connect_attempts:
            time.sleep(RETRY_PAUSE_S)
    raise DutError(f"`{label}`: the DUT could not join in {wifi.connect_attempts} attempts: {reason}")
