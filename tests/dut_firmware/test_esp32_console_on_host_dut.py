"""The ESP32 adapter's console driver (pytest-embedded's serial DUT, the console protocol, the
Wi-Fi connect step) against the host virtual DUT: the same driver, identification and error
paths an ESP32 board gets, with a firmware that has no `wifi` command. The PSK given through the
environment is written to the serial line only: never to an error message, the DUT log or the
results."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from hil.config.errors import ConfigError
from hil.config.sections import NetworkConfig, WifiConfig
from hil.console.dialects.hil_fw_wifi import connect, ensure_connected
from hil.console.embedded_console import EmbeddedConsole
from hil.errors import DutError
from hil.session import DutSession

pytestmark = pytest.mark.virtual_bench

PSK_ENV = "HIL_TEST_WIFI_PSK"


@pytest.fixture
def psk(monkeypatch: pytest.MonkeyPatch) -> str:
    value = "psk-" + secrets.token_hex(8)
    monkeypatch.setenv(PSK_ENV, value)
    return value


def leaks(text: str, psk: str) -> bool:
    return psk in text or psk.encode().hex() in text.lower()


def test_driver_identifies_the_dut_and_runs_commands(dut: object, dut_ready: DutSession) -> None:
    console = EmbeddedConsole(dut, alive=dut_ready.adapter.alive)  # type: ignore[arg-type]
    identity = console.identify(10)
    assert identity.fields["target"] == "host" and identity.fields["ip"] == dut_ready.config.network.dut_ip
    assert console.run_ok("stats", 5).command == "stats"
    assert console.command("iperf -a", 5).final.fields.get("action") == "abort"


def test_wifi_step_on_a_firmware_without_wifi_says_so(dut: object, dut_ready: DutSession, psk: str) -> None:
    console = EmbeddedConsole(dut, alive=dut_ready.adapter.alive)  # type: ignore[arg-type]
    wifi = WifiConfig(ssid="bench ap", psk_env=PSK_ENV)
    with pytest.raises(DutError, match=r"has no `wifi` command: is this the ESP32 image"):
        ensure_connected(console, wifi, dut_ready.config.network)


def test_psk_reaches_the_serial_line_only(
    dut: object, dut_ready: DutSession, psk: str, pytestconfig: pytest.Config
) -> None:
    """The connect line (with the hex PSK) goes to the DUT twice and is refused twice; the error
    names the SSID and the DUT's reason, and nothing the suite wrote holds the PSK."""
    console = EmbeddedConsole(dut, alive=dut_ready.adapter.alive)  # type: ignore[arg-type]
    wifi = WifiConfig(ssid="bench ap", psk_env=PSK_ENV, connect_attempts=2, connect_timeout_s=2)
    with pytest.raises(DutError) as exc:
        connect(console, wifi, dut_ready.config.network)
    message = str(exc.value)
    assert "could not join Wi-Fi 'bench ap' in 2 attempts: unknown command" in message
    assert not leaks(message, psk)
    console.run_ok("version", 5)  # the console is still in step after the refused lines
    logfile = Path(dut.logfile)  # type: ignore[attr-defined]
    # the serial line's log is searched, and it is the one of this exchange: the DUT refused the
    # connect line twice there (a log elsewhere, or empty, would be searched for nothing)
    assert logfile.is_file() and logfile.read_text(errors="replace").count("ERR wifi unknown command") == 2
    results = Path(pytestconfig.option.results_dir)
    written = [logfile, results / "results.jsonl", *(results / "dut").rglob("*")]
    for path in (p for p in written if p.is_file()):
        assert not leaks(path.read_text(errors="replace"), psk), f"PSK found in {path}"


def test_psk_variable_unset_or_malformed_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    wifi = WifiConfig(ssid="ap", psk_env=PSK_ENV)
    monkeypatch.delenv(PSK_ENV, raising=False)
    with pytest.raises(ConfigError, match=f"the PSK's environment variable {PSK_ENV} is not set"):
        wifi.psk()
    monkeypatch.setenv(PSK_ENV, "short")
    with pytest.raises(ConfigError) as exc:
        wifi.psk()
    assert "must be 8-63 printable characters (it has 5 bytes)" in str(exc.value) and "short" not in str(exc.value)
    assert WifiConfig(ssid="open-ap").psk() == ""
    assert NetworkConfig().dut_ip == "10.77.0.2"
