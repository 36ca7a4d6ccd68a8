"""The sections of a bench file that DUT kinds share (link, network, console, firmware, probe,
Wi-Fi, the PC, secrets) and what every DUT section has (DutBase). What needs the layers above
this one - the console dialects, the DUT kinds - is checked where they are known: each kind's
section extends hil.dut.section.KindSection, the bench file is hil.dut.bench_file.

Secrets (Wi-Fi passwords) are never written in the file: a key ending in ``_env`` names the
environment variable that holds the value.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from hil.config.attenuator import AttenuatorConfig
from hil.config.errors import ConfigError
from hil.paths import PROJECT_ROOT
from hil.secrets import register as register_secret

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAC = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class LinkConfig(Strict):
    """The PC<->DUT link of the virtual bench."""

    rate_mbit: Annotated[float, Field(gt=0, le=100_000)] = 100.0
    shaping: bool = True
    loss_pct: Annotated[float, Field(ge=0, lt=100)] = 0.0


def _ipv4(v: str) -> str:
    try:
        ipaddress.IPv4Address(v)
    except ValueError:
        raise ValueError(f"not an IPv4 address: {v!r}") from None
    return v


IPv4 = Annotated[str, AfterValidator(_ipv4)]  # an IPv4 address, as text


class NetworkConfig(Strict):
    pc_ip: IPv4 = "10.77.0.1"
    pc_netns: str | None = None  # real boards: the namespace holding the PC's bench NIC (None: the root one)
    dut_ip: IPv4 = "10.77.0.2"
    prefix_len: Annotated[int, Field(ge=8, le=30)] = 24
    dut_mac: str = "02:00:00:00:00:02"
    # the DUT's network carries nothing but the bench (a direct cable, a switch of its own): the
    # robustness family may send hostile frames on it (a virtual bench's namespaces are isolated anyway)
    isolated: bool = False

    @field_validator("dut_mac")
    @classmethod
    def _mac(cls, v: str) -> str:
        if not _MAC.match(v) or int(v[:2], 16) & 1:
            raise ValueError(f"not a unicast MAC address: {v!r}")
        return v.lower()

    @model_validator(mode="after")
    def _same_subnet(self) -> NetworkConfig:
        net = ipaddress.IPv4Network(f"{self.pc_ip}/{self.prefix_len}", strict=False)
        if ipaddress.IPv4Address(self.dut_ip) not in net:
            raise ValueError(f"dut_ip {self.dut_ip} is not in the PC's subnet {net}")
        if self.pc_ip == self.dut_ip:
            raise ValueError("pc_ip and dut_ip are the same address")
        return self


class FirmwareBuild(Strict):
    """How `./suite bisect` builds a user's firmware at another commit: `command`, a shell command,
    runs in a checkout of the git repository `repo` at that commit, after which `firmware.image`
    (a path inside `repo`) names that commit's image in the checkout."""

    repo: Path
    command: Annotated[str, Field(min_length=1)]
    timeout_s: Annotated[float, Field(gt=0, le=7200)] = 1800.0


class FirmwareConfig(Strict):
    """Which image to flash: a build configuration of the project's firmware, or an image path
    (with `build`: how to build it from its repository at another commit, for ./suite bisect)."""

    config: str | None = "default"
    image: Path | None = None
    build: FirmwareBuild | None = None

    @model_validator(mode="after")
    def _one_source(self) -> FirmwareConfig:
        if self.image is not None and self.config not in (None, "default"):
            raise ValueError("give either config or image, not both")
        if self.build is not None:
            if self.image is None:
                raise ValueError("build: needs firmware.image, the path of the image it makes inside build.repo")
            if not self.image.resolve().is_relative_to(self.build.repo.resolve()):
                raise ValueError(f"image {self.image} is not inside build.repo {self.build.repo}")
        return self


class ConsoleConfig(Strict):
    """The DUT's console: where it is and which dialect its firmware speaks, a name of the console
    dialects' registry (hil.console.dialects.registry), which checks it and gives the default
    (the project's firmware's): hil.dut.section."""

    port: str = "pty"  # "pty": the DUT's console owned by the bench (virtual, qemu); else a serial device
    baud: Annotated[int, Field(gt=0)] = 115200
    boot_timeout_s: Annotated[float, Field(gt=0, le=600)] = 10.0
    dialect: str


class LabgridConfig(Strict):
    """A board shared through labgrid: the suite locks this place at its coordinator for the run
    and takes the DUT's console (the exporter's RFC 2217 port), the PC's bench interface and the
    debug probe from the place's resources instead of local ports (hil/plumbing/labgrid_place.py)."""

    place: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.+-]{1,64}$")]
    # HOST:PORT of the labgrid coordinator; None: $LG_COORDINATOR
    coordinator: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:\[\]-]+:[0-9]{1,5}$")] | None = None
    wait_s: Annotated[float, Field(ge=0, le=86400)] = 600.0  # how long a run waits for a place another holds


class ProbeConfig(Strict):
    """The debug probe of a board (the SAME70 Xplained's EDBG is CMSIS-DAP)."""

    target: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")] = "atsame70q21b"
    unique_id: str | None = None  # pyocd --uid / OpenOCD adapter serial; None: the only probe attached
    openocd_board: str = "board/atmel_same70_xplained.cfg"
    timeout_s: Annotated[float, Field(gt=0, le=600)] = 60.0


class WifiConfig(Strict):
    """The access point an ESP32 joins (`mode: station`), or the one it is (`mode: softap`: the
    access point of a Wi-Fi pair, its partner the station). The PSK is never written here: psk_env
    names the environment variable that holds it (None: an open network)."""

    mode: Literal["station", "softap"] = "station"
    # the station's access point on the virtual bench: the host firmware's simulated one, or the
    # SoftAP of its Wi-Fi pair on the link (the DUT that names this one as its partner)
    ap: Literal["simulated", "partner"] = "simulated"
    ssid: Annotated[str, Field(min_length=1, max_length=32)]
    psk_env: str | None = None
    connect_attempts: Annotated[int, Field(ge=1, le=20)] = 3
    connect_timeout_s: Annotated[float, Field(gt=0, le=120)] = 20.0
    # the RF attenuator between the AP and the DUT the signal sweep steps (hil.config.attenuator)
    attenuator: AttenuatorConfig | None = None

    @field_validator("psk_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        if v is not None and not _ENV_NAME.match(v):
            # the value is not repeated: it may be the PSK itself, written where its variable's name belongs
            raise ValueError("not an environment variable name (give the name of the variable holding the PSK)")
        return v

    @model_validator(mode="after")
    def _softap_has_no_attenuator(self) -> WifiConfig:
        if self.mode == "softap" and self.ap != "simulated":
            raise ValueError("ap: names a station's access point; a SoftAP's section has none")
        if self.mode == "softap" and self.attenuator is not None:
            raise ValueError(
                "attenuator: the attenuator sits in front of the station; a SoftAP's section has none "
                "(give it to the station of the pair)"
            )
        return self

    def psk(self) -> str:
        """The PSK from the environment ('' for an open network); checked like the firmware checks it."""
        if self.psk_env is None:
            return ""
        value = os.environ.get(self.psk_env)
        if value is None:
            raise ConfigError(f"Wi-Fi {self.ssid!r}: the PSK's environment variable {self.psk_env} is not set")
        if not 8 <= len(value.encode()) <= 63 or not value.isprintable():
            raise ConfigError(
                f"Wi-Fi {self.ssid!r}: the PSK in {self.psk_env} must be 8-63 printable characters "
                f"(it has {len(value.encode())} bytes)"
            )
        register_secret(value)  # never written by the console pipeline from now on (hil.secrets)
        return value


ESP32_PROJECT_DIR = PROJECT_ROOT / "firmware" / "esp32"


class EspIdfConfig(Strict):
    """An ESP-IDF DUT's builds: build_<target>_<config> directories of the project, as ESP-IDF's CI
    lays them out; `configs` are the build configurations the matrix runs (each test once per config)."""

    target: Literal["esp32", "esp32s2", "esp32s3", "esp32c3", "esp32c5", "esp32c6"] = "esp32"
    project_dir: Path = ESP32_PROJECT_DIR
    configs: Annotated[list[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")]], Field(min_length=1)] = ["default"]
    flash_baud: Annotated[int, Field(ge=9600, le=4_000_000)] = 460800

    @field_validator("configs")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError(f"configs lists a configuration twice: {v}")
        return v


DEFAULT_TCP_CONGESTION = "cubic"


class PcConfig(Strict):
    """The PC side of the bench. tcp_congestion: the congestion control of the PC's TCP senders
    (iperf -Z), fixed so that PC->DUT figures do not depend on the host's default (BBR on some
    kernels: 74-82 Mbit/s instead of 87 at MSS 536 on the shaped link); null keeps the default."""

    tcp_congestion: Annotated[str, Field(pattern=r"^[a-z0-9_]{1,15}$")] | None = DEFAULT_TCP_CONGESTION


_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$")


def management_pair(peer_address: str) -> tuple[str, str]:
    """The virtual bench's management link to an SSH peer: (PC end, peer end) of the /30 that
    holds the peer's address; ValueError when the address is not a host of its /30."""
    net = ipaddress.IPv4Network(f"{peer_address}/30", strict=False)
    hosts = [str(h) for h in net.hosts()]
    if peer_address not in hosts:
        raise ValueError(f"peer.ssh.host {peer_address} is the network or broadcast address of {net}")
    return next(h for h in hosts if h != peer_address), peer_address


class SshConfig(Strict):
    """How the suite reaches a peer host over SSH (the thesis's Hub): it runs iperf 3, ping and
    the stream peer there. Host keys are always checked. On the virtual bench the peer's
    namespace runs an sshd of its own (Debian openssh-server) with a host key and a client key the
    bench makes for the run and deletes after it; `host` is then the peer's address on a
    management link PC <-> peer beside the DUT (a /30 of its own), and identity_file and
    known_hosts are the bench's."""

    host: Annotated[str, Field(min_length=1, max_length=253)]
    user: Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_.-]{0,31}$")] = "root"
    port: Annotated[int, Field(ge=1, le=65535)] = 22
    identity_file: Path | None = None  # None: ssh's own keys (agent, ~/.ssh/id_*)
    known_hosts: Path | None = None  # None: ~/.ssh/known_hosts
    python: Annotated[str, Field(pattern=r"^[A-Za-z0-9_./-]+$")] = "python3"  # the host's Python (stream peer)
    connect_timeout_s: Annotated[float, Field(gt=0, le=120)] = 10.0

    @field_validator("host")
    @classmethod
    def _host(cls, v: str) -> str:
        try:
            ipaddress.IPv4Address(v)
        except ValueError:
            if not _HOSTNAME.match(v):
                raise ValueError(f"not a host name or IPv4 address: {v!r}") from None
        return v


class PeerConfig(Strict):
    """The host on the far side of an in-path DUT (the thesis's Hub): traffic runs between the PC
    and it, through the DUT, to its address `ip`. On the virtual bench it is a network namespace
    the bench creates, driven directly or, with `ssh:`, over SSH as a remote host would be. On a
    real bench it is a second NIC of the PC in the namespace `netns` (the engineer's: the suite
    creates none there), or a remote host over `ssh:`. `rate_mbit` shapes the DUT<->peer side of
    the virtual bench (None: unshaped, as the thesis's USB side, faster than its Ethernet side)."""

    ip: IPv4 = "10.77.0.3"
    rate_mbit: Annotated[float, Field(gt=0, le=100_000)] | None = None
    ssh: SshConfig | None = None
    netns: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")] | None = None
    # another DUT of the bench file ends the traffic behind this one: its console is the far end
    # (the thesis's bridge with its own device behind it); `ip` is that DUT's network.dut_ip
    dut: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")] | None = None

    @model_validator(mode="after")
    def _one_way_to_reach_it(self) -> PeerConfig:
        ways = [w for w, v in (("netns", self.netns), ("ssh", self.ssh), ("dut", self.dut)) if v is not None]
        if len(ways) > 1:
            raise ValueError(
                f"give the peer one of `netns` (a second NIC of the PC), `ssh` (a remote host) or `dut` (a DUT of "
                f"this bench file behind this one), not {' and '.join(ways)}"
            )
        return self


class TesterConfig(Strict):
    """A real bench's frame tester (the RFC 2544 family): its two ends are the PC's bench NIC and
    its second NIC (peer.netns); `ceilings`: the file `./suite calibrate-tester` writes with the
    two NICs joined by a cable (no DUT between them), read before the DUT is measured (a relative
    path: from the project's directory)."""

    ceilings: Path

    def ceilings_path(self) -> Path:
        return self.ceilings if self.ceilings.is_absolute() else PROJECT_ROOT / self.ceilings


class DutBase(Strict):
    """What every DUT section has; a kind's own section (hil.dut.<kind>, through
    hil.dut.section.KindSection) adds its `kind` tag, its flashers, the dialects its firmware may
    speak and whatever else it needs, and says whether it runs on the bench PC."""

    FLASHERS: ClassVar[tuple[str, ...]] = ()  # the flashers that fit the kind, the first the default
    LOCAL: ClassVar[bool] = False  # runs on the bench PC on the virtual link (namespaces, tap): needs root
    EMBEDDED_SERVICES: ClassVar[str] = "serial"  # pytest-embedded's services for the console
    SKIP_AUTOFLASH: ClassVar[bool | None] = None  # pytest-embedded must not flash (the adapter does)
    PER_CONFIG_MATRIX: ClassVar[bool] = False  # the matrix runs once per build configuration
    IN_PATH: ClassVar[bool] = False  # the kind can sit in the path between the PC and a peer (role in_path)
    IN_PATH_MODE: ClassVar[str] = "firmware"  # in the path: "firmware" (a program bridging two taps) | "black_box"
    HAS_CONSOLE: ClassVar[bool] = True  # a console the suite drives (identity, stats, iperf, ping)
    # on the bench PC, the kind's program gets a core of its own and the bench's tools the others
    # (hil.plumbing.cpu_plan); a black box's program (a kernel bridge, a model device) is the bench's
    # own plumbing, and the frame tester's sender needs that core
    CPU_PLAN: ClassVar[bool] = True
    # the build the bidirectional family flashes when the bench file runs the default build: one whose
    # TCP window covers a full-duplex round trip (None: the bench file's build)
    FULL_DUPLEX_BUILD: ClassVar[str | None] = None
    # what firmware.image must be (hil.dut.images.check_image_file): "arm-elf", "host-executable"
    IMAGE_FORMAT: ClassVar[str | None] = None

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")]
    kind: str
    firmware: FirmwareConfig = FirmwareConfig()
    console: ConsoleConfig  # every kind's section gives its default (hil.dut.section.KindSection)
    flasher: str | None = None  # None: the kind's default
    network: NetworkConfig = NetworkConfig()
    link: LinkConfig = LinkConfig()
    thresholds: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")]
    # endpoint: traffic starts and ends on the DUT; in_path: the DUT forwards traffic between the PC
    # and a peer host (a bridge, a router); its own address (dut_ip) is for management and ping
    role: Literal["endpoint", "in_path"] = "endpoint"
    peer: PeerConfig | None = None
    # another DUT of this bench file on the same link (DUT to DUT): the families' traffic runs between
    # the two DUTs' consoles, this DUT's `dut_tx` to it and its `dut_rx` from it (hil.pair)
    partner: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")] | None = None
    labgrid: LabgridConfig | None = None  # a board shared through a labgrid place (not for DUTs of this PC)
    tester: TesterConfig | None = None  # a real in-path bench's frame tester (its two NICs' ceilings)

    def ladders(self) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
        """The build configurations the DUT window and MSS ladders flash, as the kind's build
        system declares them: ((config, TCP_WND in MSS) rising, (config, TCP_MSS)); none by default."""
        return (), ()

    def prebuilt_image(self) -> Path | None:
        """The project's image the run flashes as set-up built it, for a check before the run
        (./suite doctor); None where there is none (an image path, a build made on demand)."""
        return None

    def builds(self) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
        """Every build configuration the kind can flash with the stack settings its build system
        gives it ((config, ((setting, value), ...)), ...): the configuration studies choose theirs
        by name (stock, tuned, pool<k>, sndbuf<k>, default); none by default."""
        return ()

    @model_validator(mode="after")
    def _common(self) -> DutBase:
        fits = self.FLASHERS
        if self.flasher is not None and self.flasher not in fits:
            raise ValueError(f"flasher {self.flasher!r} does not fit kind {self.kind!r} (use {' or '.join(fits)})")
        if self.LOCAL and self.console.port != "pty":
            raise ValueError(f"kind {self.kind!r} has its console on the bench's pty: console.port must be 'pty'")
        if self.role == "in_path" and self.link.loss_pct:
            raise ValueError("link.loss_pct is not yet injected in the path: set it 0 for role in_path")
        if self.role == "in_path" and self.peer is None:
            raise ValueError("role in_path needs a `peer:` section (the host on the DUT's far side)")
        if self.partner is not None and self.role != "endpoint":
            raise ValueError(
                "partner: (a second DUT on this DUT's link) is for a DUT that ends the traffic (role endpoint)"
            )
        if self.role == "endpoint" and self.peer is not None:
            raise ValueError("a `peer:` is for role in_path (the DUT forwards between the PC and the peer)")
        if self.peer is not None:
            net = ipaddress.IPv4Network(f"{self.network.pc_ip}/{self.network.prefix_len}", strict=False)
            if ipaddress.IPv4Address(self.peer.ip) not in net:
                raise ValueError(f"peer.ip {self.peer.ip} is not in the PC's subnet {net} (the DUT bridges them)")
            if self.peer.ip in (self.network.pc_ip, self.network.dut_ip):
                raise ValueError(f"peer.ip {self.peer.ip} is already the PC's or the DUT's address")
            if self.peer.ssh is not None and self.LOCAL:
                self._virtual_ssh_peer(self.peer.ssh, net)
            if self.LOCAL and self.peer.netns is not None:
                raise ValueError(
                    "peer.netns is for a real bench's second NIC: the virtual bench makes the peer's namespace"
                )
            if self.peer.dut is not None and not self.LOCAL:
                raise ValueError(
                    "peer.dut (a DUT behind this one) is for the virtual bench for now: on a real bench the board "
                    "behind is flashed and run as a bench file of its own"
                )
            if not self.LOCAL and self.peer.netns is None and self.peer.ssh is None:
                raise ValueError(
                    "a real bench's peer needs peer.netns (the namespace holding the PC's second NIC) "
                    "or peer.ssh (a remote host)"
                )
            if not self.LOCAL and self.peer.rate_mbit is not None:
                raise ValueError("peer.rate_mbit shapes the virtual bench's peer link: a real link is not shaped")
        if self.tester is not None and (self.LOCAL or self.peer is None or self.peer.netns is None):
            raise ValueError(
                "tester: is for a real bench whose DUT sits in the path between the PC's bench NIC and its "
                "second NIC (peer.netns); the virtual bench measures its tester itself"
            )
        if self.labgrid is not None and self.LOCAL:
            raise ValueError(f"kind {self.kind!r} runs on this PC's virtual bench: a labgrid place is for boards")
        if not self.LOCAL:
            if self.console.port == "pty" and self.HAS_CONSOLE and self.labgrid is None:
                raise ValueError(
                    f"kind {self.kind!r} needs console.port: the board's serial device (e.g. /dev/ttyACM0), "
                    "or a labgrid place (`labgrid: {place: NAME}`)"
                )
            if self.link.shaping or self.link.loss_pct:
                raise ValueError(
                    f"kind {self.kind!r} is a real board on a real link: set link.shaping false, loss_pct 0"
                )
        return self

    @staticmethod
    def _virtual_ssh_peer(ssh: SshConfig, data_net: ipaddress.IPv4Network) -> None:
        """The virtual bench's SSH peer: reached on a management link of its own, with the bench's keys."""
        if ssh.identity_file is not None or ssh.known_hosts is not None:
            raise ValueError(
                "peer.ssh on the virtual bench: the bench makes the run's own client and host keys; "
                "drop identity_file and known_hosts (they are for a real peer host)"
            )
        try:
            address = ipaddress.IPv4Address(ssh.host)
        except ValueError:
            raise ValueError(
                f"peer.ssh.host {ssh.host!r} on the virtual bench: give the IPv4 address the peer takes on "
                "its management link (e.g. 169.254.77.2)"
            ) from None
        if address in data_net:
            raise ValueError(
                f"peer.ssh.host {ssh.host} is in the traffic's subnet {data_net}: the management link "
                "beside the DUT needs a subnet of its own (e.g. 169.254.77.2)"
            )
        management_pair(ssh.host)

    @property
    def flasher_name(self) -> str:
        return self.flasher or self.FLASHERS[0]

    @property
    def local(self) -> bool:
        return self.LOCAL

    @property
    def in_path(self) -> bool:
        """The DUT forwards traffic between the PC and the peer host instead of terminating it."""
        return self.role == "in_path"

    @property
    def build_configs(self) -> list[str]:
        """The build configurations the matrix runs on this DUT (one unless the kind says more)."""
        return [self.firmware.config or "default"]

    def config_id(self, config: str) -> str:
        """A build configuration's part of a test id when the matrix runs once per configuration."""
        return config

    def check_secrets(self) -> None:
        """Raises ConfigError when a secret the DUT needs is missing from the environment."""

    def embedded_target(self) -> str | None:
        """pytest-embedded's chip target (None: not a chip it knows)."""
        return None

    def embedded_app_path(self) -> str | None:
        """pytest-embedded's app path (None: no project it parses)."""
        return None

    def embedded_skip_autoflash(self) -> bool | None:
        """pytest-embedded's skip_autoflash: True when the suite's adapter flashes."""
        return self.SKIP_AUTOFLASH
