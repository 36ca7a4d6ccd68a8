"""The host firmware's console personalities (test equipment standing for Espressif's iperf example
and Zephyr's zperf sample) driven by the suite's dialect drivers on the virtual link: traffic both
ways, TCP and UDP, checked against the PC's iperf; what each stock console answers when it is busy,
given a bad option, aborted or asked for what it lacks. The bench-file matrices run them whole
(`./suite test`: bench/virtual-espressif.yaml, bench/virtual-zperf.yaml); this covers the
ESP-IDF v4.4 personality, which no bench file of CI uses, and the error paths."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hil.console.dialects import espressif_format as esp
from hil.console.dialects.base import DialectDriver, quiet_read
from hil.console.dialects.capabilities import NotApplicable
from hil.console.dialects.registry import make_driver
from hil.console.serial_console import SerialConsole
from hil.errors import DutError
from hil.paths import host_firmware
from hil.plumbing.host_dut import HostDutProcess, HostDutSpec
from hil.plumbing.netns import TAP, VirtualTopology
from hil.traffic.endpoints import FlowSpec, HostEndpoint, run_flow

pytestmark = pytest.mark.virtual_bench


class Personality:
    def __init__(self, driver: DialectDriver, console: SerialConsole, link: VirtualTopology, workdir: Path) -> None:
        self.driver = driver
        self.console = console
        self.link = link
        self.pc = HostEndpoint("PC", link.exec_prefix(link.pc_ns), link.config.pc_ip, workdir)
        self.dut = driver.endpoint("DUT", link.config.dut_ip)


@pytest.fixture
def personality(request: pytest.FixtureRequest, virtual_link: VirtualTopology, tmp_path: Path) -> Iterator[Personality]:
    name, dialect = request.param
    cfg = virtual_link.config
    spec = HostDutSpec(
        host_firmware("default"), virtual_link.dut_ns, TAP, cfg.dut_ip, mac=cfg.dut_mac, personality=name
    )
    process = HostDutProcess(spec, tmp_path)
    process.start()
    console = SerialConsole(str(process.console_path))
    try:
        console.open()
        driver = make_driver(dialect, console)
        driver.identify(10)
        yield Personality(driver, console, virtual_link, tmp_path)
    finally:
        console.close()
        process.stop()


ALL = [
    ("espressif-v4", "espressif-iperf"),
    ("espressif-iperf-cmd", "espressif-iperf"),
    ("zephyr-zperf", "zephyr-zperf"),
]


@pytest.mark.parametrize("personality", ALL, indirect=True, ids=[p for p, _ in ALL])
@pytest.mark.parametrize(("proto", "rate"), [("tcp", None), ("udp", 60.0)])
def test_traffic_both_ways_matches_the_pc_side(personality: Personality, proto: str, rate: float | None) -> None:
    """On the shaped 100 Mbit/s link: TCP at a rate only a working transfer reaches and no faster
    than the link, UDP at the offered rate (the DUT's -b in whole Mbit/s for Espressif) with no
    loss; the DUT's own report agrees with the PC's iperf within 2 % where the PC sent. TCP's rate
    against the link is the stock-dialect matrices' gate, with the test command's bench-fault rules:
    the DUT shares the bench PC's CPU (CI measured one 2-s PC -> DUT trial at 86.66 Mbit/s)."""
    flow = FlowSpec(proto, 2, rate_mbps=rate, length=1470 if proto == "udp" else None)  # type: ignore[arg-type]
    for sender, receiver in ((personality.dut, personality.pc), (personality.pc, personality.dut)):
        result = run_flow(sender, receiver, flow)
        got = result.receiver.mbps
        expected = 94.9 if proto == "tcp" else 60.0
        lowest = expected * (0.5 if proto == "tcp" else 0.93)
        share = 100 * got / expected
        print(f"{proto} {sender.name} -> {receiver.name}: {got:.2f} Mbit/s ({share:.1f} % of {expected:g})")
        assert lowest < got < expected * 1.03, (sender.name, got, result.raw)
        if proto == "udp":
            assert result.receiver.lost is not None and result.receiver.lost <= 0.005 * (result.receiver.datagrams or 1)
        if receiver is personality.dut:  # the PC sent: the DUT's own report is there, and agrees
            assert "dut_reported_mbps" in result.receiver.details, result.receiver.details
            assert result.receiver.details["dut_reported_mbps"] == pytest.approx(result.sender.mbps, rel=0.02)


@pytest.mark.parametrize("personality", [ALL[0]], indirect=True, ids=["espressif-v4"])
def test_v4_console_answers_as_esp_idf_v44(personality: Personality) -> None:
    drv, console = personality.driver, personality.console
    assert drv.info.name == "espressif-iperf" and drv.ping_missing() is not None  # v4.x: no ping
    with pytest.raises(NotApplicable, match="no `ping` command"):
        drv.ping(personality.link.config.pc_ip, 3, 0.2, 10)
    console.send("iperf -s -i 1 -t 30")
    started = quiet_read(console, 1.0, 5.0, lambda ls: any(esp.server_ready(x) for x in ls))
    assert any(esp.message(x).startswith("mode=tcp-server") for x in started)
    console.send("iperf -c 10.77.0.1 -t 5")  # a second run while one runs: the engine refuses it
    busy = quiet_read(console, 1.0, 5.0, lambda ls: any(esp.error_in(x) for x in ls))
    assert any(esp.error_in(x) == "iperf is running" for x in busy), busy
    drv.abort_running()  # -a: "wait current iperf to stop ...", the close, "iperf exit"
    console.send("iperf -n 1000 -c 10.77.0.1")
    bad = quiet_read(console, 0.5, 5.0, lambda ls: any(esp.error_in(x) for x in ls))
    assert 'iperf: invalid option "-n"' in [esp.error_in(x) for x in bad], bad
    console.send("iperff")
    assert "Unrecognized command" in [esp.message(x) for x in quiet_read(console, 0.5, 3.0, lambda _: False)]


@pytest.mark.parametrize("personality", [ALL[1]], indirect=True, ids=["espressif-iperf-cmd"])
def test_iperf_cmd_console_refuses_a_busy_run_and_pings(personality: Personality) -> None:
    drv, console = personality.driver, personality.console
    stats, text = drv.ping(personality.link.config.pc_ip, 4, 0.2, 10)
    assert (stats.sent, stats.received) == (4, 4) and "packets transmitted" in text
    console.send("iperf -s -u -i 1 -t 30")
    started = quiet_read(console, 1.0, 5.0, lambda ls: any(esp.server_ready(x) for x in ls))
    assert any(esp.server_ready(x) for x in started), started  # one runs: the next is refused as busy
    console.send("iperf -s -i 1 -t 30")
    busy = quiet_read(console, 1.0, 5.0, lambda ls: any(esp.error_in(x) for x in ls))
    assert "iperf is already running." in [esp.error_in(x) for x in busy]
    console.send("iperf --abort")
    done = quiet_read(console, 1.0, 5.0, lambda ls: esp.abort_finished(ls, until_done=True))
    assert [esp.message(x) for x in done][-1] == "DONE.IPERF_STOP,OK."
    facts = drv.facts()
    assert facts["free_heap_bytes"] >= facts["min_free_heap_bytes"] > 0  # type: ignore[operator]


@pytest.mark.parametrize("personality", [ALL[2]], indirect=True, ids=["zephyr-zperf"])
def test_zperf_shell_errors_and_a_dead_peer(personality: Personality) -> None:
    drv, console = personality.driver, personality.console
    stats, _ = drv.ping(personality.link.config.pc_ip, 3, 0.2, 10)
    assert (stats.sent, stats.received) == (3, 3)
    console.send("zperf udp upload 10.77.0.1")
    assert "Not enough parameters." in [x.strip() for x in quiet_read(console, 0.5, 3.0, lambda _: False)]
    with pytest.raises(DutError, match=r"UDP upload failed \(-1\)"):  # nobody answers the FIN: no statistics
        personality.dut.send(FlowSpec("udp", 1, rate_mbps=10.0, length=1000, port=5999), "10.77.0.1", "iperf2")
    with pytest.raises(NotApplicable, match="no byte count"):
        personality.dut.send(FlowSpec("tcp", 1, amount="1M"), "10.77.0.1", "iperf2")
