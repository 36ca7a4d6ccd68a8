"""Fixtures for the host DUT on a virtual link: topology, DUT process, console."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import allure
import pytest

from hil.config.sections import NetworkConfig, WifiConfig
from hil.console.protocol import FinalLine
from hil.console.serial_console import SerialConsole
from hil.paths import host_firmware
from hil.plumbing.host_dut import HostDutProcess, HostDutSpec
from hil.plumbing.netns import TAP, TbfShaping, VirtualTopology
from hil.report.allure_results import BRING_UP_TITLES
from hil.tools.ping import ping_argv

BOOT_TIMEOUT_S = 10.0


@dataclass
class RunningHostDut:
    process: HostDutProcess
    console: SerialConsole
    identity: FinalLine
    topology: VirtualTopology


@pytest.fixture(scope="module")
@allure.title(BRING_UP_TITLES["virtual_link"])
def virtual_link() -> Iterator[VirtualTopology]:
    """A PC namespace and a DUT namespace, linked, shaped to 100BASE-TX; always removed."""
    with VirtualTopology() as topo:
        topo.shape(TbfShaping())
        yield topo


@pytest.fixture
@allure.title(BRING_UP_TITLES["start_host_dut"])
def start_host_dut(
    virtual_link: VirtualTopology, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], RunningHostDut]]:
    """Starts a host DUT build (by config name) in the DUT namespace; stops it after the test."""
    started: list[RunningHostDut] = []

    def start(config: str) -> RunningHostDut:
        workdir: Path = tmp_path_factory.mktemp(f"dut-{config}")
        cfg = virtual_link.config
        spec = HostDutSpec(
            binary=host_firmware(config), netns=virtual_link.dut_ns, tap=TAP, ip=cfg.dut_ip, mac=cfg.dut_mac
        )
        process = HostDutProcess(spec, workdir)
        process.start()
        console = SerialConsole(str(process.console_path))
        try:
            console.open()
            identity = console.identify(BOOT_TIMEOUT_S)
        except Exception:
            console.close()
            process.stop()
            raise
        dut = RunningHostDut(process, console, identity, virtual_link)
        started.append(dut)
        return dut

    yield start
    for dut in started:
        dut.console.close()
        dut.process.stop()


class SimulatedStation:
    """What a test of the host firmware's simulated station needs of the bench: the link, the
    addresses, a `wifi:` section for the station's AP, and whether the PC's ping is answered."""

    ssid: str
    psk_env: str

    def __init__(self, topo: VirtualTopology) -> None:
        self.topo = topo
        self.net = NetworkConfig(pc_ip=topo.config.pc_ip, dut_ip=topo.config.dut_ip)

    def wifi(self, **kwargs: object) -> WifiConfig:
        """The station's AP, one attempt of 3 s unless told."""
        args: dict[str, object] = {"ssid": self.ssid, "psk_env": self.psk_env, "connect_attempts": 1,
                                   "connect_timeout_s": 3.0, **kwargs}  # fmt: skip
        return WifiConfig.model_validate(args)

    def pings(self) -> bool:
        argv = ping_argv(self.topo.exec_prefix(self.topo.pc_ns), self.net.dut_ip, count=1, interval_s=None)
        return subprocess.run(argv, capture_output=True, check=False).returncode == 0
