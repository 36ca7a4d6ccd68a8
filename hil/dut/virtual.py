"""DUT kind `virtual`: the project's host firmware as a process in the DUT namespace, on the
bench's tap device ("flashing" starts the selected build; see hil.dut.local).

With `wifi:` in the bench file it is a Wi-Fi station (the ESP32 port's `wifi` command, compiled
for the host) next to a simulated access point with that SSID and passphrase: it joins with the
same connect step as an ESP32 board, and nothing crosses the link until it has associated."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from hil.bench.host_dut import HostDutProcess, HostDutSpec, PtySerialLine
from hil.bench.in_path import InPathTopology
from hil.bench.netns import TAP
from hil.config.sections import DutBase, WifiConfig
from hil.dut.adapter import BenchLink, DutKind
from hil.dut.images import ImageSource
from hil.dut.local import DutProgram, LocalDut, LocalTopology, virtual_topology
from hil.dut.presets import Ladder, ladders
from hil.dut.wifi import WifiStation
from hil.paths import BUILD_HOST_SCRIPT, host_firmware

PRESET_PREFIX = "host-"


class VirtualDutConfig(DutBase):
    """`kind: virtual`: the host firmware on the bench PC; `wifi:` makes it a Wi-Fi station next to
    a simulated access point."""

    FLASHERS: ClassVar[tuple[str, ...]] = ("process",)
    LOCAL: ClassVar[bool] = True
    IN_PATH: ClassVar[bool] = True  # role in_path: the bridge build (preset host-bridge) between two taps

    kind: Literal["virtual"]
    wifi: WifiConfig | None = None

    def ladders(self) -> tuple[Ladder, Ladder]:
        return ladders(PRESET_PREFIX)

    def check_secrets(self) -> None:
        if self.wifi is not None:
            self.wifi.psk()


class VirtualDut(WifiStation, LocalDut):
    cfg: VirtualDutConfig
    cpu_thread_what = "the host firmware's thread"

    def __init__(self, cfg: VirtualDutConfig, topology: LocalTopology, workdir: Path) -> None:
        super().__init__(cfg, topology, workdir, ImageSource(cfg, BUILD_HOST_SCRIPT, PRESET_PREFIX, host_firmware))
        self.window_ladder, self.mss_configs = cfg.ladders()

    def _start(self, image: Path, line: PtySerialLine) -> DutProgram:
        net, wifi = self.cfg.network, self.cfg.wifi
        taps = self.topology.taps if isinstance(self.topology, InPathTopology) else None  # the bridge build
        spec = HostDutSpec(
            image, self.topology.dut_ns, taps[0] if taps else TAP, net.dut_ip, mac=net.dut_mac,
            wifi_sim_ssid=wifi.ssid if wifi else None, wifi_sim_psk_env=wifi.psk_env if wifi else None,
            bridge_taps=taps,
        )  # fmt: skip
        self.wifi = None  # a new program has not associated
        proc = HostDutProcess(spec, self.workdir, line)
        proc.start()
        return proc

    def environment(self) -> dict[str, str]:
        return {"Wi-Fi": self.wifi.describe()} if self.wifi else {}


def _make(cfg: DutBase, link: BenchLink, workdir: Path) -> VirtualDut:
    assert isinstance(cfg, VirtualDutConfig)
    return VirtualDut(cfg, virtual_topology(link, cfg), workdir)


KIND = DutKind("virtual", VirtualDutConfig, _make)
