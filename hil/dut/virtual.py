"""DUT kind `virtual`: the project's host firmware as a process in the DUT namespace, on the
bench's tap device ("flashing" starts the selected build; see hil.dut.local).

With `wifi:` in the bench file it is a Wi-Fi station (the ESP32 port's `wifi` command, compiled
for the host) next to a simulated access point with that SSID and passphrase: it joins with the
same connect step as an ESP32 board, and nothing crosses the link until it has associated."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import model_validator

from hil.config.sections import DutBase, WifiConfig
from hil.console.dialects.capabilities import DialectInfo
from hil.dut.adapter import BenchLink
from hil.dut.images import HOST_EXECUTABLE, ImageSource
from hil.dut.kinds import register_kind
from hil.dut.local import DutProgram, LocalDut, LocalTopology, virtual_topology
from hil.dut.presets import Builds, Ladder, builds, ladders
from hil.dut.section import KindSection
from hil.dut.wifi import WifiStation
from hil.paths import BUILD_HOST_SCRIPT, host_firmware
from hil.plumbing.attenuator import VirtualAttenuator
from hil.plumbing.host_dut import HostDutProcess, HostDutSpec, PtySerialLine
from hil.plumbing.in_path import InPathTopology
from hil.plumbing.netns import TAP

PRESET_PREFIX = "host-"


# the host firmware's console personalities per stock dialect (`--personality`), the first the
# default: the dialects it emulates (firmware/host/src/*_personality.c)
PERSONALITIES: dict[str, tuple[str, ...]] = {
    "espressif-iperf": ("espressif-iperf-cmd", "espressif-v4"),
    "zephyr-zperf": ("zephyr-zperf",),
}
# the stock dialects whose personality has the firmware's Wi-Fi commands (esp_wifi_personality.h)
WIFI_PERSONALITIES = ("espressif-iperf",)
# the personality with ESP-IDF v4.x's `ap` (a SoftAP of a Wi-Fi pair on the link, and its station)
PAIR_PERSONALITY = "espressif-v4"
STOCK_SOFTAP_ADDRESS = ("192.168.4.1", 24)  # ESP-IDF's default AP netif: the iperf example cannot change it
Personality = Literal[tuple(p for names in PERSONALITIES.values() for p in names)]  # type: ignore[valid-type]


class VirtualDutConfig(KindSection):
    """`kind: virtual`: the host firmware on the bench PC; `wifi:` makes it a Wi-Fi station next to
    a simulated access point. With a stock `console.dialect` it speaks that firmware's console (a
    personality of the host firmware: test equipment printing exactly those formats over the same
    lwIP engine); `personality` picks one when the dialect has several output formats."""

    FLASHERS: ClassVar[tuple[str, ...]] = ("process",)
    IMAGE_FORMAT: ClassVar[str | None] = HOST_EXECUTABLE
    LOCAL: ClassVar[bool] = True
    IN_PATH: ClassVar[bool] = True  # role in_path: the bridge build (preset host-bridge) between two taps
    SIMULATED_RADIO: ClassVar[bool] = True  # wifi.attenuator.virtual: the radio model of --wifi-air

    kind: Literal["virtual"]
    wifi: WifiConfig | None = None
    personality: Personality | None = None  # type: ignore[valid-type]

    @classmethod
    def speaks(cls, info: DialectInfo) -> bool:
        """The project's firmware, and the stock dialects it has a personality of."""
        return not info.stock or info.name in PERSONALITIES

    @model_validator(mode="after")
    def _personality(self) -> VirtualDutConfig:
        fits = PERSONALITIES.get(self.console.dialect, ())
        if self.personality is not None and self.personality not in fits:
            raise ValueError(
                f"personality {self.personality!r} does not speak console.dialect {self.console.dialect!r}"
                + (f" (it has {' or '.join(fits)})" if fits else " (the project's firmware has no personality)")
            )
        if self.stock_firmware and self.role == "in_path":
            raise ValueError(
                f"console.dialect {self.console.dialect!r} on the virtual bench is an endpoint: no role in_path"
            )
        if self.stock_firmware and self.wifi is not None and self.console.dialect not in WIFI_PERSONALITIES:
            raise ValueError(
                f"console.dialect {self.console.dialect!r} on the virtual bench is a wired endpoint: no wifi: "
                f"(the simulated station speaks {', '.join(WIFI_PERSONALITIES)} among the stock dialects)"
            )
        if self.stock_firmware and self.wifi is not None and (self.wifi.mode == "softap" or self.wifi.ap == "partner"):
            if self.personality_name != PAIR_PERSONALITY:
                raise ValueError(
                    f"a stock Wi-Fi pair on the virtual link needs personality: {PAIR_PERSONALITY} (ESP-IDF v4.x's "
                    f"iperf example, whose `ap` starts the SoftAP; {self.personality_name} has no `ap`)"
                )
            ip, prefix = STOCK_SOFTAP_ADDRESS
            if self.wifi.mode == "softap" and (self.network.dut_ip, self.network.prefix_len) != (ip, prefix):
                raise ValueError(
                    f"ESP-IDF's iperf example runs its SoftAP at {ip}/{prefix} (the default AP netif, which its `ap` "
                    f"cannot change): set network.dut_ip {ip} and prefix_len {prefix} (got "
                    f"{self.network.dut_ip}/{self.network.prefix_len})"
                )
        return self

    @property
    def personality_name(self) -> str | None:
        """The host firmware's `--personality` (None: the project's own console)."""
        fits = PERSONALITIES.get(self.console.dialect)
        return (self.personality or fits[0]) if fits else None

    def ladders(self) -> tuple[Ladder, Ladder]:
        return ((), ()) if self.stock_firmware else ladders(PRESET_PREFIX)

    def builds(self) -> Builds:
        return () if self.stock_firmware else builds(PRESET_PREFIX)

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
        att = wifi.attenuator if wifi is not None and wifi.attenuator is not None and wifi.attenuator.virtual else None
        if att is not None:  # the station associates at the attenuator's start value
            VirtualAttenuator(self.air_file).set(att.start)
        spec = HostDutSpec(
            image, self.topology.dut_ns, taps[0] if taps else getattr(self.topology, "tap", TAP), net.dut_ip,
            mac=net.dut_mac,
            wifi_sim_ssid=wifi.ssid if wifi else None, wifi_sim_psk_env=wifi.psk_env if wifi else None,
            bridge_taps=taps, personality=self.cfg.personality_name,
            wifi_air=self.air_file if att is not None else None,
            wifi_air_notch_db=att.planted_bad_point_db if att is not None else None,
            wifi_link=wifi is not None and (wifi.mode == "softap" or wifi.ap == "partner"),
        )  # fmt: skip
        self.wifi = None  # a new program has not associated
        proc = HostDutProcess(spec, self.workdir, line)
        proc.start()
        return proc

    @property
    def air_file(self) -> Path:
        """Where the virtual attenuator writes what the host firmware's radio model follows."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        return self.workdir / "attenuator"

    def environment(self) -> dict[str, str]:
        return super().environment() | ({"Wi-Fi": self.wifi.describe()} if self.wifi else {})


@register_kind(VirtualDutConfig)
def _make(cfg: DutBase, link: BenchLink, workdir: Path) -> VirtualDut:
    assert isinstance(cfg, VirtualDutConfig)
    return VirtualDut(cfg, virtual_topology(link, cfg), workdir)
