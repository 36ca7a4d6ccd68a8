"""The stock dialects' drivers on consoles that answer with published transcripts (the Wi-Fi join of
an ESP32 cannot run here: no radio): what each firmware's `help` says sets the options the driver
sends; the join reads the address and the RSSI as ESP-IDF's CI does, retries, and never names the
PSK. The drivers against live firmware: tests/dut_firmware/test_console_personalities.py."""

from __future__ import annotations

import pytest

from hil.config.sections import NetworkConfig, WifiConfig
from hil.console.dialects.capabilities import NotApplicable
from hil.console.dialects.espressif import EspressifDriver, iperf_options
from hil.console.dialects.espressif_wifi import join
from hil.console.driver import ConsoleDriver
from hil.errors import ConsoleTimeout, DutError
from hil.traffic.endpoints import FlowSpec
from tests.support.transcripts import transcript

pytestmark = pytest.mark.selftest

PSK_ENV = "HIL_TEST_DIALECT_PSK"


class ScriptedSource:
    """A console that answers each command with the lines scripted for it (by the command's first
    word), then falls silent."""

    name = "a scripted console"

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.sent: list[str] = []
        self.pending: list[str] = []

    def send(self, line: str) -> None:
        self.sent.append(line)
        replies = self.answers.get(line.split()[0], [])
        self.pending += replies.pop(0) if len(replies) > 1 else (replies[0] if replies else [])

    def read_line(self, timeout_s: float) -> str | None:
        return self.pending.pop(0) if self.pending else None


def driver_with(answers: dict[str, list[list[str]]]) -> tuple[EspressifDriver, ScriptedSource]:
    answers.setdefault("version", [["Unrecognized command"]])  # these firmwares' help lists no `version`
    source = ScriptedSource(answers)
    return EspressifDriver(ConsoleDriver(source)), source


def test_help_of_each_version_sets_abort_and_bandwidth() -> None:
    v10 = iperf_options(transcript("iperf-cmd-1.0-help.txt"))
    assert (v10.abort, v10.bandwidth, v10.length) == ("--abort", "suffix", True)
    old = iperf_options(transcript("espressif-v4-help.txt"))
    assert (old.abort, old.bandwidth, old.length) == ("-a", None, False)


def test_identify_reads_commands_and_options_from_help() -> None:
    drv, source = driver_with({"help": [transcript("iperf-cmd-1.0-help.txt")]})
    identity = drv.identify(2)
    assert identity.fields["name"] == "espressif-iperf" and identity.fields["iperf_bandwidth"] == "suffix"
    assert "ip" not in identity.fields  # the address comes from the join, or the PC's ping
    udp = FlowSpec("udp", 3.2, length=1470, rate_mbps=85.3)
    assert drv.iperf_line(udp, "10.77.0.1") == "iperf -c 10.77.0.1 -u -p 5001 -i 1 -t 4 -l 1470 -b 85300k"
    assert source.sent == ["help", "version"]  # version's answer (or refusal) marks the help's end


def test_an_iperf_without_b_or_l_makes_the_case_not_applicable() -> None:
    drv, _ = driver_with({"help": [transcript("espressif-v4-help.txt")]})
    drv.identify(2)
    with pytest.raises(NotApplicable, match="no -b"):
        drv.iperf_line(FlowSpec("udp", 3, rate_mbps=50.0), "10.77.0.1")
    with pytest.raises(NotApplicable, match="no -l"):
        drv.iperf_line(FlowSpec("tcp", 3, length=64), "10.77.0.1")
    assert drv.iperf_line(FlowSpec("tcp", 3), None) == "iperf -s -p 5001 -i 1 -t 3"
    assert drv.ping_missing() is not None


def test_a_console_without_iperf_is_one_timeout_naming_it() -> None:
    drv, _ = driver_with({"help": [["help ", "  Print the list of registered commands"]]})
    with pytest.raises(ConsoleTimeout, match="listed no `iperf` command"):
        drv.identify(0.3)


WIFI_CMD_HELP = ["sta_connect  [<ssid>] [<pass>]", "sta_scan  [<ssid>]", "iperf  [-suV] [--abort]"]
SCAN = [
    "I (3000) WIFI: DONE.STA_SCAN_START,OK.",
    "I (5000) WIFI: +SCAN:[30:5a:3a:74:90:f0][testap-11][rssi=-34][auth=WPA2_PSK][ch=11]",
    "I (5001) WIFI: SCAN_DONE: Found 1 APs",
]
BENCH_AP = WifiConfig(ssid="testap-11", psk_env=PSK_ENV)


def joined_lines() -> list[str]:
    lines = transcript("iperf-cmd-0.1-join-and-tcp-server.txt")
    return lines[1 : next(i for i, x in enumerate(lines) if x.startswith("iperf>\x20iperf -s"))]


@pytest.fixture
def psk(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(PSK_ENV, "correct horse battery")
    return "correct horse battery"


def test_join_with_sta_connect_reads_address_and_scan_rssi(psk: str) -> None:
    drv, source = driver_with({"help": [WIFI_CMD_HELP], "sta_scan": [SCAN], "sta_connect": [joined_lines()]})
    drv.identify(2)
    link = join(drv, BENCH_AP, NetworkConfig(pc_ip="192.168.1.2", dut_ip="192.168.1.79"))
    assert (link.ip, link.rssi_dbm, link.attempts) == ("192.168.1.79", -34, 1)
    assert link.as_fields()["wifi_rssi_dbm"] == -34 and "<psk hidden>" in link.describe()
    assert source.sent[2:] == ["sta_scan testap-11", f"sta_connect testap-11 {psk}"]  # the PSK: to the port only


def test_join_at_another_address_says_to_reserve_it(psk: str) -> None:
    drv, _ = driver_with({"help": [WIFI_CMD_HELP], "sta_scan": [SCAN], "sta_connect": [joined_lines()]})
    drv.identify(2)
    with pytest.raises(DutError, match=r"gave the DUT 192\.168\.1\.79, the bench file says 192\.168\.1\.50") as exc:
        join(drv, BENCH_AP, NetworkConfig(pc_ip="192.168.1.2", dut_ip="192.168.1.50"))
    assert psk not in str(exc.value)


def test_v4_join_that_never_gets_an_address_names_the_last_disconnect(psk: str) -> None:
    retrying = ["I (5325) cmd_wifi: sta connecting to 'aptest'", "I (7325) cmd_wifi: sta disconnect, reconnect...",
                "I (9325) cmd_wifi: sta disconnect, reconnect..."]  # fmt: skip
    drv, source = driver_with({"help": [transcript("espressif-v4-help.txt")], "sta": [retrying]})
    drv.identify(2)
    wifi = WifiConfig(ssid="aptest", psk_env=PSK_ENV, connect_attempts=2, connect_timeout_s=0.2)
    with pytest.raises(DutError, match=r"could not join in 2 attempts: .*last: sta disconnect, reconnect") as exc:
        join(drv, wifi, NetworkConfig(pc_ip="192.168.10.42", dut_ip="192.168.10.248"))
    assert psk not in str(exc.value) and "sta aptest <psk hidden>" in str(exc.value)
    assert source.sent.count(f"sta aptest {psk}") == 2 and source.sent[2] == "scan aptest"
