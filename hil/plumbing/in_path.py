"""A DUT *in the path*: the virtual bench with the device between the PC and a peer.

    netns <name>-pc          netns <name>-dut                                  netns peer
    +---------------+        +-------------------------------------------+     +-----------------+
    | veth-pc PC_IP |<-veth->| p0                                     p1 |<--->| veth-peer PEER  |
    +---------------+        |  firmware mode:                           |     +-----------------+
                             |   p0 -- br-p0 -- tap0 <-DUT program-> tap1 -- br-p1 -- p1        |
                             |  black_box mode: p0 and p1 only; the user's command joins them    |
                             +-------------------------------------------+

The PC and the peer share one subnet: whatever sits in the DUT namespace must forward at layer 2.
`p0` is the DUT's PC-side port, `p1` its peer-side port. In ``firmware`` mode two kernel bridges
each join one port with one tap (never with each other, so there is no loop: every frame between
the PC and the peer crosses the program that bridges tap0 and tap1, e.g. the host firmware's
bridge build with ``--bridge-taps tap0,tap1``). In ``black_box`` mode nothing else is created: a
command run with :meth:`InPathTopology.run_in_dut` gets ``p0 p1`` as ``$1 $2`` (e.g. it puts them
in a Linux bridge of its own).

With a management link (``management=(pc_address, peer_address)``, a /30) the PC also reaches
the peer beside the DUT, as a bench PC reaches a remote Hub over the lab network: the SSH
session that drives a peer "over SSH" uses it, never the measured path.

The PC-side link is shaped with tbf in both directions (on the PC's interface and on p0), the
peer side optionally with its own rate (on the peer's interface and on p1). Deleting the
namespaces removes every link, bridge, tap and qdisc; processes left in them are killed first.
The namespaces carry netns.py's ``hil-<pid>-`` names, so its stale-run and last-resort cleanups
(conftest.py) remove them after a crash too.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, Self

from hil.errors import BenchError
from hil.plumbing.cpu_plan import CpuPlan, steer_receive
from hil.plumbing.netns import (
    _NAME_RE,
    GSO_MAX_SEGS_DEFAULT,
    NETNS_PREFIX,
    TbfShaping,
    TopologyConfig,
    VirtualTopology,
    _run,
    bridge_netfilter_off,
    check_bridge_netfilter_off,
    cleanup_stale,
    delete_namespace,
    list_namespaces,
    plain_bridge,
    require_root,
)

PC_IF = "veth-pc"  # the PC's interface (PC namespace)
PEER_IF = "veth-peer"  # the peer's interface (peer namespace)
PORT_PC = "p0"  # the DUT's PC-side port (DUT namespace)
PORT_PEER = "p1"  # the DUT's peer-side port (DUT namespace)
TAP_PC = "tap0"  # firmware mode: the firmware's PC-side tap, bridged with p0 by the kernel
TAP_PEER = "tap1"  # firmware mode: the firmware's peer-side tap, bridged with p1 by the kernel
BRIDGE_PC = "br-p0"  # firmware mode: kernel bridge p0 <-> tap0
BRIDGE_PEER = "br-p1"  # firmware mode: kernel bridge p1 <-> tap1
PEER_DUT_TAP = "tap0"  # a DUT behind (peer_dut): its firmware's tap in the peer namespace
PEER_DUT_BRIDGE = "br-peer"  # ... bridged with the peer's interface by the kernel
MGMT_PC_IF = "mgmt-pc"  # management link (SSH to the peer): the PC's end
MGMT_PEER_IF = "mgmt-peer"  # ... and the peer's
# Instance numbers of this module's topologies: far above netns.VirtualTopology's counter, so the
# two never pick the same namespace name in one process.
_NUMBER_BASE = 900_000

Side = Literal["pc", "peer"]


class InPathMode(StrEnum):
    """What forwards between the DUT's ports."""

    FIRMWARE = "firmware"  # a program bridging tap0 <-> tap1 (each tap joined to its port by a kernel bridge)
    BLACK_BOX = "black_box"  # whatever the user's command sets up between p0 and p1


@dataclass(frozen=True)
class InPathConfig:
    """Addresses of the in-path topology: PC and peer in one subnet, the DUT's management address
    (the firmware bridge's own, for its console's ping and iperf) in it too."""

    pc_ip: str = "10.78.0.1"
    dut_ip: str = "10.78.0.2"
    peer_ip: str = "10.78.0.3"
    prefix_len: int = 24
    dut_mac: str = "02:00:00:00:00:02"

    @property
    def netmask(self) -> str:
        bits = (0xFFFFFFFF << (32 - self.prefix_len)) & 0xFFFFFFFF
        return ".".join(str((bits >> s) & 0xFF) for s in (24, 16, 8, 0))


_instance_counter = 0


def _tap_bridge(ns: str, bridge: str, port: str, tap: str) -> list[list[str]]:
    """A kernel bridge in `ns` joining one port with one tap, both learning nothing: every frame
    crosses to the other one, so a frame from a forged address (the robustness `fdb` class) moves
    it in a DUT's address table, never in the bench's own bridges."""
    return [
        plain_bridge(ns, bridge),
        ["ip", "-n", ns, "tuntap", "add", "dev", tap, "mode", "tap"],
        ["ip", "-n", ns, "link", "set", tap, "master", bridge],
        ["ip", "-n", ns, "link", "set", port, "master", bridge],
        ["ip", "-n", ns, "link", "set", tap, "up"],
        ["ip", "-n", ns, "link", "set", bridge, "up"],
        ["bridge", "-n", ns, "link", "set", "dev", tap, "learning", "off"],
        ["bridge", "-n", ns, "link", "set", "dev", port, "learning", "off"],
    ]


def _namespace_names(number: int) -> tuple[str, str, str]:
    """PC, DUT and peer namespace names of one topology (netns.py's name pattern, which the crash
    cleanups go by, knows all three)."""
    base = f"{NETNS_PREFIX}{os.getpid()}-{number}"
    names = f"{base}-pc", f"{base}-dut", f"{base}-peer"
    assert all(_NAME_RE.match(n) for n in names)
    return names


@dataclass
class InPathTopology:
    """PC namespace <-> DUT namespace (ports p0, p1) <-> peer namespace; created on enter, always
    removed on exit (also when creation fails halfway).

    mode: ``firmware`` (kernel bridges p0-tap0 and p1-tap1 for a program bridging the taps) or
    ``black_box`` (p0 and p1 only). pc_shaping: tbf on both ends of the PC-side link (None:
    unshaped). peer_shaping: tbf on both ends of the peer-side link (None, the default: unshaped).
    management: (PC end, peer end) addresses of a /30 management link beside the DUT (None: none).
    pc_ns, dut_ns, peer_ns: namespace names (default: ``hil-<pid>-<n>-...``).
    """

    mode: InPathMode = InPathMode.FIRMWARE
    config: InPathConfig = field(default_factory=InPathConfig)
    pc_shaping: TbfShaping | None = field(default_factory=TbfShaping)
    peer_shaping: TbfShaping | None = None
    management: tuple[str, str] | None = None
    # a DUT behind this one ends the traffic (peer.dut): the peer namespace holds its firmware's tap,
    # bridged with the peer's interface, and no address of the kernel's (the DUT's own is the peer's)
    peer_dut: bool = False
    # where the bench runs on the PC's CPUs (hil.plumbing.cpu_plan): each link's receive work on one
    # CPU; the DUT's program is placed by its kind when it starts. None: the scheduler decides
    cpu_plan: CpuPlan | None = None
    placement: str = ""  # the plan as applied, for the report's environment (hil.plumbing.links)
    pc_ns: str = ""
    dut_ns: str = ""
    peer_ns: str = ""

    def __post_init__(self) -> None:
        global _instance_counter
        self.mode = InPathMode(self.mode)
        _instance_counter += 1
        pc, dut, peer = _namespace_names(_NUMBER_BASE + _instance_counter)
        self.pc_ns = self.pc_ns or pc
        self.dut_ns = self.dut_ns or dut
        self.peer_ns = self.peer_ns or peer

    def __enter__(self) -> Self:
        self.create()
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    @property
    def namespaces(self) -> tuple[str, str, str]:
        """The PC, DUT and peer namespaces."""
        return self.pc_ns, self.dut_ns, self.peer_ns

    @property
    def ports(self) -> tuple[str, str]:
        """The DUT's ports in its namespace: PC side, peer side."""
        return PORT_PC, PORT_PEER

    @property
    def taps(self) -> tuple[str, str]:
        """Firmware mode: the taps the program bridges (PC side, peer side)."""
        return TAP_PC, TAP_PEER

    def firmware_args(self) -> list[str]:
        """Arguments of the host firmware's bridge build for this topology: its ports and its
        management address."""
        c = self.config
        return ["--bridge-taps", ",".join(self.taps), "--ip", c.dut_ip, "--netmask", c.netmask, "--mac", c.dut_mac]

    def create(self) -> None:
        """Builds the namespaces, links, (firmware mode) bridges and taps, and the shaping."""
        require_root()
        cleanup_stale()
        c = self.config
        pc, dut, peer = self.namespaces
        steps = [
            ["ip", "netns", "add", pc],
            ["ip", "netns", "add", dut],
            ["ip", "netns", "add", peer],
            bridge_netfilter_off(dut),  # the kernel bridges pass every frame as it is
            # every namespace stays silent on the wire but for what a test sends (no IPv6 link-local
            # chatter: a host's router solicitations, backing off from 4 s, are frames the DUT learns
            # from, so a bridge heard the peer at random moments; the suite's traffic is IPv4)
            *(
                [
                    ["ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{which}.disable_ipv6=1"]
                    for ns in (pc, dut, peer)
                    for which in ("all", "default")
                ]
            ),
            ["ip", "link", "add", PC_IF, "netns", pc, "type", "veth", "peer", "name", PORT_PC, "netns", dut],
            ["ip", "link", "add", PEER_IF, "netns", peer, "type", "veth", "peer", "name", PORT_PEER, "netns", dut],
        ]
        for ns in self.namespaces:
            steps.append(["ip", "-n", ns, "link", "set", "lo", "up"])
        hosts = ((pc, PC_IF, c.pc_ip),) if self.peer_dut else ((pc, PC_IF, c.pc_ip), (peer, PEER_IF, c.peer_ip))
        for ns, dev, ip in hosts:
            steps += [
                ["ip", "-n", ns, "addr", "add", f"{ip}/{c.prefix_len}", "dev", dev],
                ["ip", "-n", ns, "link", "set", dev, "up"],
            ]
        if self.peer_dut:  # the DUT behind: its tap and the peer's interface on one kernel bridge
            steps += [
                bridge_netfilter_off(peer),
                *_tap_bridge(peer, PEER_DUT_BRIDGE, PEER_IF, PEER_DUT_TAP),
                ["ip", "-n", peer, "link", "set", PEER_IF, "up"],
            ]
        if self.mode is InPathMode.FIRMWARE:
            for bridge, port, tap in ((BRIDGE_PC, PORT_PC, TAP_PC), (BRIDGE_PEER, PORT_PEER, TAP_PEER)):
                steps += _tap_bridge(dut, bridge, port, tap)
        steps += [["ip", "-n", dut, "link", "set", port, "up"] for port in self.ports]
        if self.management is not None:
            steps.append(["ip", "link", "add", MGMT_PC_IF, "netns", pc, "type", "veth", "peer", "name", MGMT_PEER_IF,
                          "netns", peer])  # fmt: skip
            for ns, dev, ip in ((pc, MGMT_PC_IF, self.management[0]), (peer, MGMT_PEER_IF, self.management[1])):
                steps += [
                    ["ip", "-n", ns, "addr", "add", f"{ip}/30", "dev", dev],
                    ["ip", "-n", ns, "link", "set", dev, "up"],
                ]
        try:
            for step in steps:
                _run(step)
            check_bridge_netfilter_off(dut)
            if self.peer_dut:
                check_bridge_netfilter_off(peer)
            self._shape()
        except BaseException:
            self.destroy()
            raise
        self._steer()

    def _steer(self) -> None:
        """Each link's receive work on one CPU (hil.plumbing.cpu_plan): the DUT's ports and taps on
        the DUT's core, the PC's and the peer's interfaces on the bench's."""
        plan = self.cpu_plan
        if plan is None:
            return
        for ns, dev in ((self.pc_ns, PC_IF), (self.peer_ns, PEER_IF)):
            steer_receive(self.exec_prefix(ns), dev, plan.bench_cpus, plan)
        dut_side = [*self.ports, *(self.taps if self.mode is InPathMode.FIRMWARE else ())]
        for dev in dut_side:
            steer_receive(self.exec_prefix(self.dut_ns), dev, plan.dut_cpus, plan)
        if self.peer_dut:  # the DUT behind's tap: its frames in on the DUTs' core too
            steer_receive(self.exec_prefix(self.peer_ns), PEER_DUT_TAP, plan.dut_cpus, plan)

    def behind(self) -> VirtualTopology:
        """The link of the DUT behind (peer_dut), as its kind sees a virtual link: its namespace
        (the peer's) and tap; made and removed with this topology (never created on its own)."""
        if not self.peer_dut:
            raise BenchError("this in-path bench has a peer host, not a DUT behind the DUT")
        view = VirtualTopology(TopologyConfig(self.config.pc_ip, self.config.peer_ip, self.config.prefix_len),
                               pc_ns=self.pc_ns, dut_ns=self.peer_ns, cpu_plan=self.cpu_plan)  # fmt: skip
        view.placement = self.placement
        return view

    def _links(self, side: Side) -> tuple[tuple[str, str], tuple[str, str]]:
        """(namespace, interface) of both ends of one side's link: the far host's end, the DUT's port."""
        if side == "pc":
            return (self.pc_ns, PC_IF), (self.dut_ns, PORT_PC)
        return (self.peer_ns, PEER_IF), (self.dut_ns, PORT_PEER)

    def _shape(self) -> None:
        """tbf on both ends of each shaped side. With any shaping, all four veth ends get
        gso_max_segs 1 (as netns.VirtualTopology.shape): the hosts' stacks hand the links single
        frames, as a NIC does after segmentation offload, so tbf charges its per-frame overhead for
        every frame, also for frames a black-box bridge forwards from the other side."""
        if self.pc_shaping is None and self.peer_shaping is None:
            return
        for side in ("pc", "peer"):
            for ns, dev in self._links(side):
                _run(["ip", "-n", ns, "link", "set", "dev", dev, "gso_max_segs", "1"])
        for side, shaping in (("pc", self.pc_shaping), ("peer", self.peer_shaping)):
            if shaping is None:
                continue
            for ns, dev in self._links(side):
                _run([*self.exec_prefix(ns), "tc", "qdisc", "replace", "dev", dev, "root", *shaping.tc_args()])

    def unshape(self) -> None:
        """Removes every shaping: the links run as fast as the host can move frames."""
        for side in ("pc", "peer"):
            for ns, dev in self._links(side):
                _run([*self.exec_prefix(ns), "tc", "qdisc", "del", "dev", dev, "root"], check=False)
                _run(["ip", "-n", ns, "link", "set", "dev", dev, "gso_max_segs", str(GSO_MAX_SEGS_DEFAULT)])
        self.pc_shaping = None
        self.peer_shaping = None

    def set_carrier(self, side: Side, up: bool) -> None:
        """Takes the DUT's port on one side (``pc``: p0, ``peer``: p1) down or up: the host on
        that side loses or regains its carrier, as when a cable is pulled and plugged again."""
        if side not in ("pc", "peer"):
            raise ValueError(f"side must be 'pc' or 'peer', not {side!r}")
        port = PORT_PC if side == "pc" else PORT_PEER
        _run(["ip", "-n", self.dut_ns, "link", "set", port, "up" if up else "down"])

    def run_in_dut(
        self, command: str, timeout_s: float = 30.0, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Runs a shell command in the DUT namespace with the ports as ``$1`` (p0, PC side) and
        ``$2`` (p1, peer side), e.g. the black box's own bridge:
        ``ip link add br0 type bridge && ip link set "$1" master br0 && ...``; `env` adds to the
        environment. A failure is a BenchError naming its output."""
        argv = [*self.exec_prefix(self.dut_ns), "sh", "-c", command, "sh", *self.ports]
        full_env = {**os.environ, **env} if env else None
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False, env=full_env)
        except subprocess.TimeoutExpired:
            raise BenchError(f"command in the DUT namespace did not finish within {timeout_s:g} s: {command}") from None
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip()
            raise BenchError(f"command in the DUT namespace failed ({proc.returncode}): {command}: {detail}")
        return proc

    def loss_counter(self) -> int | None:
        """Frames dropped by injected loss: none is injected in the path (yet)."""
        return None

    def exec_prefix(self, ns: str) -> list[str]:
        """The argv prefix that runs a program in namespace `ns`."""
        return ["ip", "netns", "exec", ns]

    def destroy(self) -> None:
        """Removes the three namespaces with every process, link, bridge, tap and qdisc in them
        (idempotent: what does not exist is skipped)."""
        existing = set(list_namespaces())
        for ns in self.namespaces:
            if ns in existing:
                delete_namespace(ns)
