"""The Wi-Fi connect step of the project's firmware (`hil-fw`: the ESP32 port, and the host firmware
next to its simulated access point), over its console protocol:

    wifi status                                  -> RESULT wifi status=connected|connecting|disconnected ...
    wifi connect SSID_HEX PSK_HEX|- IP PREFIX_LEN -> RESULT wifi status=connected ssid_hex= bssid=
                                                    channel= rssi= auth= phy= ip=   |  ERR wifi ...
    wifi disconnect                              -> RESULT wifi status=disconnected (after an ERR
                                                    for a `wifi connect` it aborted)

    wifi ap SSID_HEX PSK_HEX|- IP PREFIX_LEN     -> RESULT wifi mode=softap status=started ssid_hex=
                                                    bssid= channel= auth= ip= stations=   (the SoftAP)
    wifi ap stop                                 -> RESULT wifi mode=softap status=stopped

SSID and PSK travel hex-encoded (console tokens cannot hold spaces; `-` is an open network). The PSK is read from the
environment only here, is written to the serial port only, and never appears in an error
message, a log line or a report: the command is named `wifi connect <ssid> <psk hidden>` in
everything the suite prints (`wifi ap <ssid> <psk hidden>` for the SoftAP).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hil.config.sections import NetworkConfig, WifiConfig
from hil.console.dialects.base import RADIO_COUNTS, RadioReading
from hil.console.driver import ConsoleDriver
from hil.console.protocol import FinalLine
from hil.errors import ConsoleTimeout, DutError

RETRY_PAUSE_S = 2.0


@dataclass(frozen=True)
class WifiLink:
    """The association the DUT reported: what the results record next to every number."""

    ssid: str
    bssid: str
    channel: int
    rssi_dbm: int
    auth: str
    phy: str
    attempts: int
    joins: int | None = None  # associations since the firmware started (None: an image that does not say)
    lost: str | None = None  # why the last established association ended ("7 NOT_ASSOCED"; None: none ended)

    def describe(self) -> str:
        again = (
            f", joined {self.joins} times, last lost: {self.lost}"
            if self.joins and self.joins > 1 and self.lost
            else ""
        )
        radio = f"RSSI {self.rssi_dbm} dBm, {self.phy}, {self.auth}"
        return f"{self.ssid} ch {self.channel}, {radio}, bssid {self.bssid}{again}"

    def as_fields(self) -> dict[str, object]:
        return {"wifi_ssid": self.ssid, "wifi_bssid": self.bssid, "wifi_channel": self.channel,
                "wifi_rssi_dbm": self.rssi_dbm, "wifi_auth": self.auth, "wifi_phy": self.phy}  # fmt: skip


@dataclass(frozen=True)
class SoftApLink:
    """The SoftAP the DUT runs (one end of a Wi-Fi pair): recorded next to every number as a
    station's association is."""

    ssid: str
    bssid: str
    channel: int
    auth: str
    stations: int

    def describe(self) -> str:
        return f"SoftAP {self.ssid} ch {self.channel}, {self.auth}, bssid {self.bssid}, {self.stations} station(s)"

    def as_fields(self) -> dict[str, object]:
        return {"wifi_mode": "softap", "wifi_ssid": self.ssid, "wifi_bssid": self.bssid,
                "wifi_channel": self.channel, "wifi_auth": self.auth}  # fmt: skip


def _softap(final: FinalLine, ssid: str) -> SoftApLink:
    try:
        return SoftApLink(
            ssid=bytes.fromhex(final.fields.get("ssid_hex", "")).decode(errors="replace") or ssid,
            bssid=final.fields.get("bssid", "?"),
            channel=final.get_int("channel"),
            auth=final.fields.get("auth", "?"),
            stations=final.get_int("stations"),
        )
    except ValueError as exc:
        raise DutError(f"malformed `wifi ap` reply from the DUT: {exc}") from None


def ensure_softap(console: ConsoleDriver, wifi: WifiConfig, net: NetworkConfig) -> SoftApLink:
    """Runs the SoftAP of the bench file (SSID, passphrase, the DUT's address) unless it runs
    already as wanted; a station's association or another SoftAP is ended first. Raises DutError
    naming what the firmware said (never the PSK)."""
    now = status(console)
    current = now.fields
    wanted = {"mode": "softap", "status": "started", "ssid_hex": wifi.ssid.encode().hex(), "ip": net.dut_ip}
    if all(current.get(k) == v for k, v in wanted.items()):
        return _softap(now, wifi.ssid)
    if current.get("mode") == "softap":
        reply = console.command("wifi ap stop", 10)
        if not reply.final.ok:
            raise DutError(f"DUT refused `wifi ap stop`: {reply.final.reason}")
    elif current.get("status") != "disconnected":
        disconnect(console)
    psk = wifi.psk()
    line = f"wifi ap {wifi.ssid.encode().hex()} {psk.encode().hex() or '-'} {net.dut_ip} {net.prefix_len}"
    console.send(line)
    reply = console.wait_final(f"wifi ap {wifi.ssid} <psk hidden>", 10)
    if not reply.final.ok or reply.final.fields.get("status") != "started":
        raise DutError(f"the DUT could not start SoftAP {wifi.ssid!r}: {reply.final.reason or reply.final.fields}")
    return _softap(reply.final, wifi.ssid)


def _link(final: FinalLine, ssid: str, attempts: int) -> WifiLink:
    try:
        return WifiLink(
            ssid=bytes.fromhex(final.fields.get("ssid_hex", "")).decode(errors="replace") or ssid,
            bssid=final.fields.get("bssid", "?"),
            channel=final.get_int("channel"),
            rssi_dbm=final.get_int("rssi"),
            auth=final.fields.get("auth", "?"),
            phy=final.fields.get("phy", "?"),
            attempts=attempts,
            joins=int(final.fields["joins"]) if "joins" in final.fields else None,
            lost=(
                f"{final.fields['lost_reason']} {final.fields.get('lost_name', '?')}"
                if final.fields.get("lost_reason", "0") != "0"
                else None
            ),
        )
    except ValueError as exc:
        raise DutError(f"malformed `wifi` reply from the DUT: {exc}") from None


def _connected_as_wanted(final: FinalLine, wifi: WifiConfig, net: NetworkConfig) -> bool:
    f = final.fields
    wanted = {"status": "connected", "ssid_hex": wifi.ssid.encode().hex(), "ip": net.dut_ip}
    return all(f.get(k) == v for k, v in wanted.items())


def radio(console: ConsoleDriver) -> RadioReading:
    """`wifi status`: RSSI of the association, and the radio's noise, MCS, PHY rate and counts where
    the driver gives them (the host firmware's radio model; an ESP32 board: RSSI only)."""
    f = status(console).fields
    if f.get("status") != "connected":
        return RadioReading(False, source="wifi status")
    try:
        counts = {k: int(f[k]) for k in RADIO_COUNTS} if all(k in f for k in RADIO_COUNTS) else None
        return RadioReading(
            True,
            rssi_dbm=int(f["rssi"]),
            noise_dbm=int(f["noise"]) if "noise" in f else None,
            mcs=int(f["mcs"]) if "mcs" in f else None,
            phy_mbps=int(f["phy_kbps"]) / 1000 if "phy_kbps" in f else None,
            counts=counts,
            source="wifi status",
            joins=int(f["joins"]) if "joins" in f else None,
        )
    except (KeyError, ValueError) as exc:
        raise DutError(f"malformed `wifi status` reply from the DUT: {exc} in {f}") from None


def status(console: ConsoleDriver, timeout_s: float = 5.0) -> FinalLine:
    reply = console.command("wifi status", timeout_s)
    if not reply.final.ok:
        if "unknown command" in reply.final.reason:
            raise DutError("the DUT's firmware has no `wifi` command: is this the ESP32 image (firmware/esp32)?")
        raise DutError(f"DUT refused `wifi status`: {reply.final.reason}")
    return reply.final


def ensure_connected(console: ConsoleDriver, wifi: WifiConfig, net: NetworkConfig) -> WifiLink:
    """Joins the access point unless already joined with the bench file's SSID and address;
    tries wifi.connect_attempts times. Raises DutError naming the last reason."""
    current = status(console)
    if _connected_as_wanted(current, wifi, net):
        return _link(current, wifi.ssid, 0)
    if current.fields.get("status") != "disconnected":  # another AP or address, a join under way, a lost link
        disconnect(console)
    return connect(console, wifi, net)


def disconnect(console: ConsoleDriver) -> None:
    """Leaves the network or ends a join under way. The firmware first ends a `wifi connect` still
    waiting for its final line ("ERR wifi connect failed: aborted ..."), then answers."""
    reply = console.command("wifi disconnect", 10)
    while not reply.final.ok and reply.final.reason.startswith("connect failed"):
        reply = console.wait_final("wifi disconnect", 10)
    if not reply.final.ok or reply.final.fields.get("status") != "disconnected":
        raise DutError(f"DUT refused `wifi disconnect`: {reply.final.reason or reply.final.fields}")


def _still_joining(current: FinalLine, waited_s: float) -> str:
    """Why a `wifi connect` has not ended yet, from `wifi status` (attempts, last reason)."""
    f = current.fields
    if f.get("status") != "connecting":
        return f"no answer within {waited_s:g} s (status {f.get('status')})"
    return (f"not associated within {waited_s:g} s: {f.get('attempts', '?')} attempts, last reason "
            f"{f.get('reason', '?')} ({f.get('name', '?')})")  # fmt: skip


def connect(console: ConsoleDriver, wifi: WifiConfig, net: NetworkConfig) -> WifiLink:
    """Sends `wifi connect` up to wifi.connect_attempts times; raises DutError naming the last
    reason (never the PSK)."""
    psk = wifi.psk()
    line = f"wifi connect {wifi.ssid.encode().hex()} {psk.encode().hex() or '-'} {net.dut_ip} {net.prefix_len}"
    label = f"wifi connect {wifi.ssid} <psk hidden>"  # what messages call the command
    reason = ""
    for attempt in range(1, wifi.connect_attempts + 1):
        console.send(line)
        try:
            reply = console.wait_final(label, wifi.connect_timeout_s)
        except ConsoleTimeout:
            current = status(console)
            if _connected_as_wanted(current, wifi, net):  # associated just as the wait ended
                return _link(current, wifi.ssid, attempt)
            reason = _still_joining(current, wifi.connect_timeout_s)
            disconnect(console)  # the firmware would go on trying: end it before the next attempt
        else:
            if reply.final.ok and reply.final.fields.get("status") == "connected":
                return _link(reply.final, wifi.ssid, attempt)
            reason = reply.final.reason or f"status={reply.final.fields.get('status')}"
        if attempt < wifi.connect_attempts:
            time.sleep(RETRY_PAUSE_S)
            if "busy" in reason:  # another join is under way: end it first
                disconnect(console)
    raise DutError(f"the DUT could not join Wi-Fi {wifi.ssid!r} in {wifi.connect_attempts} attempts: {reason}")
