"""The ESP32 adapter's Wi-Fi connect step against the ESP32 port's own `wifi` command, run on the
host DUT next to a simulated access point (firmware/host/src/wifi_sim.c): the port's wifi_cmd.c
compiled unchanged, reached through pytest-embedded's serial DUT on the program's pseudo-terminal,
with the suite's console driver and connect step (hil.dut.wifi). Only the radio is simulated.

Covers joining (and what is recorded of the association), staying joined, a wrong passphrase, an
SSID not on the air, a lost and re-joined link, the longest SSID and passphrase the console line
takes, and that the passphrase reaches nothing but the serial line."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytest_embedded.dut_factory import DutFactory

from hil.config.sections import WifiConfig
from hil.console.dialects.hil_fw_wifi import connect, disconnect, ensure_connected, radio, status
from hil.console.embedded_console import EmbeddedConsole
from hil.errors import DutError
from hil.paths import host_firmware
from hil.plumbing.host_dut import HostDutProcess, HostDutSpec
from hil.plumbing.netns import TAP, VirtualTopology
from hil.scenarios.families.signal import _rejoined
from tests.support.host_dut import SimulatedStation

pytestmark = pytest.mark.virtual_bench

AP_SSID = "hil sim ap"
AP_PSK_ENV = "HIL_TEST_SIM_AP_PSK"  # what the simulated AP expects
SENT_PSK_ENV = "HIL_TEST_SENT_PSK"  # what the suite sends


class Station(SimulatedStation):
    ssid, psk_env = AP_SSID, SENT_PSK_ENV

    def __init__(self, console: EmbeddedConsole, process: HostDutProcess, topo: VirtualTopology, psk: str) -> None:
        super().__init__(topo)
        self.console = console
        self.process = process
        self.psk = psk


@pytest.fixture
def start_station(
    virtual_link: VirtualTopology, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Station]]:
    """Starts the host DUT as a station next to an AP with SSID `ssid` and passphrase `psk`
    (from the environment); the suite's PSK variable holds the same unless `sent` differs."""
    started: list[HostDutProcess] = []

    def start(ssid: str = AP_SSID, psk: str | None = None, sent: str | None = None) -> Station:
        psk = psk if psk is not None else "sim-" + secrets.token_urlsafe(12)
        monkeypatch.setenv(AP_PSK_ENV, psk)
        monkeypatch.setenv(SENT_PSK_ENV, sent if sent is not None else psk)
        cfg = virtual_link.config
        spec = HostDutSpec(host_firmware("default"), virtual_link.dut_ns, TAP, cfg.dut_ip, mac=cfg.dut_mac,
                           wifi_sim_ssid=ssid, wifi_sim_psk_env=AP_PSK_ENV)  # fmt: skip
        process = HostDutProcess(spec, tmp_path / f"dut{len(started)}")
        process.start()
        started.append(process)
        dut = DutFactory.create(embedded_services="serial", port=str(process.console_path), baud=115200)
        return Station(EmbeddedConsole(dut, alive=process.alive), process, virtual_link, psk)

    yield start
    DutFactory.close()
    for process in started:
        process.stop()


def leaks(text: str, psk: str) -> bool:
    return psk in text or psk.encode().hex() in text.lower()


def test_joins_and_reports_the_association(start_station: Callable[..., Station]) -> None:
    sta = start_station()
    assert sta.console.identify(10).fields["ip"] == "0.0.0.0"
    assert not sta.pings(), "a station that has not associated must not answer"
    link = ensure_connected(sta.console, sta.wifi(), sta.net)
    assert (link.ssid, link.channel, link.rssi_dbm, link.auth, link.phy, link.attempts) == (
        AP_SSID, 6, -47, "wpa2", "11bgn", 1,
    )  # fmt: skip
    assert link.bssid == "02:00:00:00:a0:01"
    assert sta.console.identify(10).fields["ip"] == sta.net.dut_ip
    assert sta.pings()
    again = ensure_connected(sta.console, sta.wifi(), sta.net)
    assert again.attempts == 0 and again.rssi_dbm == -47, "joined already: no second association"


def test_wrong_passphrase_names_the_driver_reason_never_the_psk(start_station: Callable[..., Station]) -> None:
    sta = start_station(sent="not-the-" + secrets.token_urlsafe(8))
    with pytest.raises(DutError) as exc:
        connect(sta.console, sta.wifi(connect_attempts=2, connect_timeout_s=2), sta.net)
    message = str(exc.value)
    assert message.startswith(f"the DUT could not join Wi-Fi {AP_SSID!r} in 2 attempts: not associated within 2 s")
    assert "(4WAY_HANDSHAKE_TIMEOUT)" in message
    sent = WifiConfig(ssid=AP_SSID, psk_env=SENT_PSK_ENV).psk()
    assert not leaks(message, sent) and not leaks(message, sta.psk)
    assert status(sta.console).fields["status"] == "disconnected", "the join under way was ended"
    assert not sta.pings()
    log = sta.process.log_path.read_text(errors="replace") + Path(sta.console.dut.logfile).read_text(errors="replace")
    assert "4WAY_HANDSHAKE_TIMEOUT" in log, "the logs searched are not those of this join"
    assert not leaks(log, sent) and not leaks(log, sta.psk)


def test_ssid_not_on_the_air_and_the_ap_coming_back(start_station: Callable[..., Station]) -> None:
    sta = start_station()
    with pytest.raises(DutError, match=r"last reason 201 \(NO_AP_FOUND\)"):
        connect(sta.console, sta.wifi(ssid="another ap", connect_timeout_s=1.5), sta.net)
    sta.console.run_ok("wifisim ap off", 5)
    with pytest.raises(DutError, match=r"NO_AP_FOUND"):
        connect(sta.console, sta.wifi(connect_timeout_s=1.5), sta.net)
    sta.console.run_ok("wifisim ap on", 5)
    assert ensure_connected(sta.console, sta.wifi(), sta.net).attempts == 1


def test_a_lost_link_is_rejoined_by_the_next_connect_step(start_station: Callable[..., Station]) -> None:
    sta = start_station()
    ensure_connected(sta.console, sta.wifi(), sta.net)
    first = radio(sta.console)
    assert first.associated and first.joins == 1 and not _rejoined(first, radio(sta.console))
    sta.console.run_ok("wifisim ap off", 5)  # the AP goes silent: beacon timeout, the firmware keeps trying
    sta.console.wait_text(r"WIFI status=disconnected source=console reason=200 name=BEACON_TIMEOUT", 5)
    assert status(sta.console).fields["status"] == "connecting"
    sta.console.run_ok("wifisim ap on", 5)
    link = ensure_connected(sta.console, sta.wifi(), sta.net)  # re-joined by the firmware, or joined again here
    assert link.channel == 6 and sta.pings()
    sta.console.run_ok("wifisim drop 4", 5)  # ASSOC_EXPIRE: the firmware re-joins on its own
    sta.console.wait_text(r"WIFI status=connected source=console", 5)
    assert ensure_connected(sta.console, sta.wifi(), sta.net).attempts == 0
    again = radio(sta.console)  # associated now, but not all along: the signal sweep's step carries nothing
    assert again.associated and again.joins is not None and again.joins >= 3 and _rejoined(first, again)


def test_disconnect_ends_a_join_under_way(start_station: Callable[..., Station]) -> None:
    sta = start_station()
    sta.console.run_ok("wifisim ap off", 5)
    sta.console.send(f"wifi connect {AP_SSID.encode().hex()} {sta.psk.encode().hex()} {sta.net.dut_ip} 24")
    disconnect(sta.console)  # the aborted `wifi connect` answers first, then `wifi disconnect`
    assert status(sta.console).fields["status"] == "disconnected"
    sta.console.run_ok("version", 5)


def test_longest_ssid_and_passphrase_fit_the_console_line(start_station: Callable[..., Station]) -> None:
    ssid = "HIL bench AP with 32-byte name #"
    psk = "a passphrase of 63 printable characters: ~!@#$%^&*()_+{}|:<>?xy"
    assert (len(ssid.encode()), len(psk)) == (32, 63)
    sta = start_station(ssid=ssid, psk=psk)
    link = ensure_connected(sta.console, sta.wifi(ssid=ssid), sta.net)
    assert link.ssid == ssid and sta.pings()


def test_open_network(start_station: Callable[..., Station], monkeypatch: pytest.MonkeyPatch) -> None:
    sta = start_station(psk="")
    link = ensure_connected(sta.console, WifiConfig(ssid=AP_SSID), sta.net)
    assert link.auth == "open"
    disconnect(sta.console)
    monkeypatch.setenv(SENT_PSK_ENV, "a-passphrase")
    with pytest.raises(DutError, match=r"NO_AP_FOUND"):  # a passphrase makes the station skip open APs
        connect(sta.console, sta.wifi(connect_timeout_s=1.5), sta.net)
