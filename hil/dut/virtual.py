"""DUT kind `virtual`: the project's host firmware as a process in the DUT namespace, on the
bench's tap device ("flashing" starts the selected build; see hil.dut.local).

With `wifi:` in the bench file it is a Wi-Fi station (the ESP32 port's `wifi` command, compiled
for the host) next to a simulated access point with that SSID and passphrase: it joins with the
same connect step as an ESP32 board, and nothing crosses the link until it has associated."""

from __future__ import annotations

from pathlib import Path

from hil.config.bench import DutConfig
from hil.dut.images import ImageSource
from hil.dut.local import DutProgram, LocalDut
from hil.dut.wifi import WifiStation
from hil.host_dut import HostDutProcess, HostDutSpec, PtySerialLine
from hil.netns import TAP, VirtualTopology
from hil.paths import BUILD_HOST_SCRIPT, host_firmware


class VirtualDut(LocalDut, WifiStation):
    window_ladder = (("wnd2", 2), ("wnd4", 4), ("default", 8), ("wnd16", 16))
    mss_configs = (("mss536", 536), ("default", 1460))

    def __init__(self, cfg: DutConfig, topology: VirtualTopology, workdir: Path) -> None:
        super().__init__(cfg, topology, workdir, ImageSource(cfg, BUILD_HOST_SCRIPT, "host-", host_firmware))

    def _start(self, image: Path, line: PtySerialLine) -> DutProgram:
        net, wifi = self.cfg.network, self.cfg.wifi
        spec = HostDutSpec(
            image, self.topology.dut_ns, TAP, net.dut_ip, mac=net.dut_mac,
            wifi_sim_ssid=wifi.ssid if wifi else None, wifi_sim_psk_env=wifi.psk_env if wifi else None,
        )  # fmt: skip
        self.wifi = None  # a new program has not associated
        proc = HostDutProcess(spec, self.workdir, line)
        proc.start()
        return proc
