"""The stock firmwares' console parsers on transcripts written from the published formats (each
file in tests/support/transcripts/ says where its lines come from; none is the host firmware's personality):
ESP-IDF v4.x's iperf example, espressif/iperf-cmd 0.1.x and 1.0.x, ESP-IDF's ping and system
commands, Zephyr's zperf and `net ping` - interval lines, summaries, errors, aborted tests."""

from __future__ import annotations

import pytest

from hil.console.dialects import espressif_format as esp
from hil.console.dialects import zperf_format as zp
from hil.errors import DutError
from tests.support.transcripts import after, transcript

pytestmark = pytest.mark.selftest


# --- ESP-IDF v4.x example ----------------------------------------------------------------------
def test_v44_tcp_server_intervals_summary_and_exit() -> None:
    lines = transcript("espressif-v4.4-tcp-server.txt")
    assert any(esp.server_ready(x) for x in lines)
    assert esp.layout_of(lines) == "v4"
    rep = esp.read_report(lines)
    assert len(rep.intervals) == 10 and rep.intervals[1].mbps == pytest.approx(36.16)
    assert rep.summary is not None and rep.summary.mbps == pytest.approx(31.37) and rep.seconds == 30
    assert rep.exited and rep.error is None and rep.peer == "192.168.10.42:62958"
    assert esp.run_finished(lines)
    assert not esp.run_finished(lines[: lines.index("   0-  30 sec       31.37 Mbits/sec")])


def test_v44_aborted_client_has_no_summary_and_is_rated_from_its_intervals() -> None:
    lines = transcript("espressif-v4.4-udp-client-aborted.txt")
    rep = esp.read_report(lines)
    assert rep.summary is None and rep.exited and rep.layout == "v4"
    assert rep.mbps == pytest.approx((49.98 + 50.02 + 50.00 + 49.96) / 4) and rep.seconds == 4
    assert esp.abort_finished(after(lines, "iperf -a"))
    assert esp.message(lines[1]).startswith("mode=udp-client")  # the colour codes are gone


def test_v43_client_summary_and_v5_binary_units() -> None:
    rep = esp.read_report(transcript("espressif-v4.3-tcp-client.txt"))
    assert rep.summary is not None and rep.summary.mbps == pytest.approx(21.80)
    binary = esp.read_report(transcript("espressif-v4.3-tcp-client.txt"), v4_binary=True)
    assert binary.summary is not None and binary.summary.mbps == pytest.approx(21.80 * 1.048576)
    assert esp.v4_layout_is_binary("v5.1.2") and esp.v4_layout_is_binary("v5.2")
    assert not esp.v4_layout_is_binary("v4.4.8") and not esp.v4_layout_is_binary(None)


def test_v44_connect_failure_and_busy_are_errors() -> None:
    failed = transcript("espressif-v4.4-connect-failed.txt")
    rep = esp.read_report(failed)
    assert rep.error is not None and "Socket unable to connect: errno 113" in rep.error and rep.exited
    assert esp.run_finished(failed)
    busy = esp.read_report(transcript("espressif-v4.4-busy.txt"))
    assert busy.error == "iperf is running"


# --- espressif/iperf-cmd ---------------------------------------------------------------------------
def test_iperf_cmd_01_report_is_in_binary_megabits() -> None:
    lines = transcript("iperf-cmd-0.1-join-and-tcp-server.txt")
    served = after(lines, "iperf -s -i 2 -t 10")
    assert esp.layout_of(served) == "iperf-cmd-0.1"
    rep = esp.read_report(served)
    assert len(rep.intervals) == 5 and rep.summary is not None
    assert rep.summary.mbps == pytest.approx(24.17 * 1048576 / 1e6)  # 0.1.x divides by 1024 x 1024
    assert rep.peer == "192.168.1.2:43726" and rep.exited


def test_iperf_cmd_01_join_gives_the_address_and_outlives_a_disconnect() -> None:
    lines = transcript("iperf-cmd-0.1-join-and-tcp-server.txt")
    joined = lines[: next(i for i, x in enumerate(lines) if "iperf -s" in x)]
    before_ip = joined[: next(i for i, x in enumerate(joined) if "sta ip:" in x)]
    assert esp.join_gave_up(before_ip) is None  # reason 201 then a retry: not a failure yet
    assert esp.join_last_reason(before_ip) == "WIFI_EVENT_STA_DISCONNECTED! reason: 201"
    assert esp.sta_ip(joined) == "192.168.1.79"


def test_iperf_cmd_01_busy_unknown_option_and_abort() -> None:
    lines = transcript("iperf-cmd-0.1-busy-and-abort.txt")
    assert esp.error_in(lines[1]) == "iperf is already running."
    assert esp.error_in(lines[3]) == 'iperf: invalid option "-a"'
    abort = after(lines, "iperf --abort")
    assert esp.abort_finished(abort, until_done=True) and esp.message(abort[-1]) == "DONE.IPERF_STOP,OK."
    assert not esp.abort_finished(abort[:-1], until_done=True)  # `iperf exit` comes before DONE


def test_iperf_cmd_10_tab_separated_report_with_bytes() -> None:
    lines = transcript("iperf-cmd-1.0-udp-client.txt")
    assert esp.layout_of(lines) == "iperf-cmd-1.0"
    rep = esp.read_report(lines)
    assert [i.mbps for i in rep.intervals] == pytest.approx([20.0, 20.0, 19.92, 20.0])
    assert rep.summary is not None and rep.summary.mbps == pytest.approx(19.98)
    assert rep.transfer_bytes == 9_990_000 and rep.peer == "192.168.1.2:5001" and rep.summary.instance == 1
    assert esp.run_finished(lines)  # 1.0.x prints nothing after its summary
    assert not esp.run_finished(lines[:-1])


def test_iperf_cmd_10_errors_and_abort() -> None:
    lines = transcript("iperf-cmd-1.0-errors.txt")
    rep = esp.read_report(lines)
    assert rep.error is not None and rep.error.startswith("iperf_start_tcp_client(412): cannot start TCP client")
    assert esp.run_finished(lines[:4])
    assert esp.abort_finished(after(lines, "iperf --abort"))


# --- ESP-IDF ping, scan, system commands -----------------------------------------------------------
def test_esp_ping_counts_replies_and_timeouts() -> None:
    lines = transcript("espressif-ping.txt")
    assert esp.ping_finished(lines) and not esp.ping_finished(lines[:-1])
    p = esp.parse_ping(lines)
    assert (p.sent, p.received, p.loss_pct_printed) == (5, 4, 20)
    assert p.rtts_ms == (36.0, 34.0, 33.0, 33.0)


def test_esp_ping_unknown_host_is_one_error() -> None:
    lines = transcript("espressif-ping-unknown-host.txt")
    assert esp.ping_finished(lines)
    with pytest.raises(DutError, match=r"unknown host www\.hello-world\.io"):
        esp.parse_ping(lines)


def test_scan_rssi_and_system_commands() -> None:
    assert esp.scan_rssi(transcript("espressif-v4-scan.txt"), "aptest") == -47
    assert esp.scan_rssi(transcript("espressif-v4-scan.txt"), "other") is None
    system = transcript("espressif-system.txt")
    assert esp.free_heap(after(system, "free")) == 227692
    assert esp.min_free_heap(after(system, "heap")) == 201840
    assert esp.idf_version(after(system, "version")) == "v4.4.8"


# --- Zephyr zperf ------------------------------------------------------------------------------------
def test_zperf_tcp_upload_block() -> None:
    lines = transcript("zperf-tcp-upload.txt")
    assert zp.upload_finished(lines) and not zp.upload_finished(lines[:-1])
    up = zp.parse_upload("tcp", lines)
    assert (up.client_mbps, up.client_duration_s, up.packets_sent, up.errors) == (11.32, 10.0, 55290, 0)


def test_zperf_udp_upload_statistics_server_and_client() -> None:
    lines = transcript("zperf-udp-upload.txt")
    assert zp.upload_finished(lines)
    up = zp.parse_upload("udp", lines)
    assert up.server_mbps == pytest.approx(1.01) and up.client_mbps == pytest.approx(1.01)
    assert (up.packets_received, up.packets_sent, up.lost, up.outoforder) == (3799, 3799, 0, 0)
    assert up.jitter_ms == pytest.approx(0.063) and up.server_duration_s == pytest.approx(30.01)
    assert up.server_report_decoded


def test_zperf_udp_upload_without_server_report_fails_with_its_message() -> None:
    lines = transcript("zperf-udp-upload-no-report.txt")
    assert zp.upload_finished(lines)
    with pytest.raises(DutError, match=r"UDP upload failed \(-1\)"):
        zp.parse_upload("udp", lines)


def test_zperf_undecodable_report_is_flagged() -> None:
    up = zp.parse_upload("udp", transcript("zperf-udp-upload-last-packet.txt"))
    assert not up.server_report_decoded and up.server_mbps == 0.0 and up.client_mbps == pytest.approx(1.0)


def test_zperf_udp_download_session_and_server_state() -> None:
    lines = transcript("zperf-udp-download.txt")
    assert zp.server_started("udp", lines[1])
    assert zp.session_finished("udp", lines) and not zp.session_finished("udp", lines[:8])
    s = zp.parse_session("udp", lines)
    assert (s.duration_s, s.mbps, s.packets, s.lost, s.outoforder) == (5.0, 49.98, 21252, 7, 1)
    assert s.jitter_ms == pytest.approx(0.112)
    assert zp.already_started("udp", lines[-3]) and zp.server_stopped("udp", lines[-1])


def test_zperf_tcp_download_in_minutes() -> None:
    s = zp.parse_session("tcp", transcript("zperf-tcp-download.txt"))
    assert (s.duration_s, s.mbps) == (60.0, 93.84)


def test_zperf_errors_are_recognised() -> None:
    lines = transcript("zperf-errors.txt")
    errors = [zp.error_in(x) for x in lines if not x.startswith("uart:~$")]  # not the echoed commands
    assert errors == ["Not enough parameters.", "Invalid IPv4 address 192.0.2.300", None, "zperff: command not found"]
    assert zp.server_stopped("tcp", lines[5])


def test_zephyr_net_ping_counts_replies_without_a_summary() -> None:
    lines = transcript("zephyr-net-ping.txt")
    assert zp.ping_finished(4, lines) and not zp.ping_finished(4, lines[:-1])
    p = zp.parse_ping(4, lines)
    assert p.sent == 4 and p.rtts_ms == (0.52, 0.48, 0.61) and not p.timeout
    timeout = zp.parse_ping(3, transcript("zephyr-net-ping-timeout.txt"))
    assert timeout.rtts_ms == () and timeout.timeout


@pytest.mark.parametrize(
    ("text", "seconds"), [("10.00 s", 10.0), ("1.00 m", 60.0), ("250.50 ms", 0.2505), ("63 us", 63e-6)]
)
def test_zperf_durations(text: str, seconds: float) -> None:
    assert zp.duration_s(text) == pytest.approx(seconds)


def test_zperf_unknown_units_are_a_dut_error() -> None:
    with pytest.raises(DutError, match="rate it does not print"):
        zp.rate_mbps("3 Gbps")
