"""The virtual bench topology, built from iproute2 inside namespaces the suite owns.

    netns <name>-pc                      netns <name>-dut
    +----------------+   veth pair   +--------------------------------+
    | veth-pc  PC_IP |<------------->| veth-dut --+-- br0 --+-- tap0  |<- DUT program
    +----------------+               +--------------------------------+

Both veth ends can be shaped with tbf to emulate 100BASE-TX (``overhead 24`` accounts for
preamble, FCS and inter-frame gap). Deleting the namespaces removes every link, tap and qdisc;
processes left in them are killed first. Namespace names carry the creating process id so a later
run can remove what a killed run left behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Self

from hil.errors import BenchError
from hil.plumbing.cpu_plan import CpuPlan, steer_receive

NETNS_PREFIX = "hil-"
PC_IF = "veth-pc"
DUT_IF = "veth-dut"
BRIDGE = "br0"
TAP = "tap0"
PARTNER_TAP = "tap1"  # a second DUT on the same link (a bench file's partner:), on the DUT namespace's bridge
GSO_MAX_SEGS_DEFAULT = 65535
# a run's namespaces: the PC's, the DUT's, and a peer host's (a DUT in the path: hil.plumbing.in_path)
_NAME_RE = re.compile(rf"^{NETNS_PREFIX}(\d+)-(\d+)-(pc|dut|peer)$")


def bridge_netfilter_off(ns: str) -> list[str]:
    """The command that keeps a namespace's bridges plain layer-2 bridges: with the host's
    br_netfilter module loaded (Docker loads it), bridged IPv4 goes through iptables' hooks, which
    drop malformed headers (bad version, IHL, length, checksum) and reassemble fragments before the
    DUT's tap sees them. Per namespace; without the module there is nothing to switch off (-e)."""
    return ["ip", "netns", "exec", ns, "sysctl", "-qew", *(f"net.bridge.bridge-nf-call-{k}=0" for k in BRIDGE_NF)]


BRIDGE_NF = ("iptables", "ip6tables", "arptables")


def plain_bridge(ns: str, name: str) -> list[str]:
    """The command that makes a kernel bridge passing every frame on: no spanning tree, no
    forwarding delay, no multicast snooping, and IEEE 802.1D's reserved group addresses forwarded
    (01:80:C2:00:00:00 with STP off, 03..0F by the mask; the kernel never forwards 01 and 02), so
    what crosses is the DUT's decision, not the bench's."""
    return ["ip", "-n", ns, "link", "add", name, "type", "bridge", "stp_state", "0", "forward_delay", "0",
            "mcast_snooping", "0", "group_fwd_mask", "0xfff8"]  # fmt: skip


def check_bridge_netfilter_off(ns: str) -> None:
    """BenchError when a namespace's bridged frames still go through netfilter: br_netfilter is
    loaded but its switches are not the namespace's own (a kernel older than their per-namespace
    sysctls), or stayed on."""
    loaded = os.path.exists("/sys/module/br_netfilter")
    files = [f"/proc/sys/net/bridge/bridge-nf-call-{k}" for k in BRIDGE_NF]
    out = subprocess.run(["ip", "netns", "exec", ns, "cat", *files], capture_output=True, text=True, check=False)
    values = out.stdout.split()
    if (loaded and len(values) != len(BRIDGE_NF)) or any(v != "0" for v in values):
        raise BenchError(
            f"the kernel's br_netfilter passes bridged frames in namespace {ns} through iptables (net.bridge."
            f"bridge-nf-call-*: {' '.join(values) or 'not per namespace'}): it would drop malformed frames and "
            "reassemble fragments before the DUT; unload it (modprobe -r br_netfilter) or use a kernel whose "
            "bridge-nf-call sysctls are per namespace"
        )


_TC_TIME = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0}
_TC_SIZE = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "b": 8, "kb": 8 * 1024, "mb": 8 * 1024 * 1024}


def _tc_seconds(text: str) -> float:
    """A tc time ("50ms") in seconds."""
    m = re.fullmatch(r"([0-9.]+)([a-z]*)", text.strip().lower())
    if m is None or m.group(2) not in _TC_TIME:
        raise ValueError(f"not a tc time: {text!r}")
    return float(m.group(1)) * _TC_TIME[m.group(2)]


def _tc_bits(text: str) -> float:
    """A tc size ("32kbit", "4kb") in bits."""
    m = re.fullmatch(r"([0-9.]+)([a-z]*)", text.strip().lower())
    if m is None or m.group(2) not in _TC_SIZE:
        raise ValueError(f"not a tc size: {text!r}")
    return float(m.group(1)) * _TC_SIZE[m.group(2)]


@dataclass(frozen=True)
class TbfShaping:
    """Token-bucket shaping applied to both veth ends."""

    rate_mbit: float = 100.0
    burst: str = "32kbit"
    latency: str = "50ms"
    overhead: int = 24

    def queue_ms(self, frame_bytes: int = 1514) -> float:
        """The longest a frame can wait in this tbf behind full frames of `frame_bytes` (the MAC
        header to the payload's end, as tc counts them): tc sizes its queue to rate x latency +
        burst bytes, which drain at the rate with `overhead` bytes more per frame; plus the frame
        itself on the wire."""
        rate_bps = self.rate_mbit * 1e6
        limit_bytes = rate_bps * _tc_seconds(self.latency) / 8 + _tc_bits(self.burst) / 8
        per_frame = (frame_bytes + self.overhead) / frame_bytes
        return 1000.0 * (limit_bytes * per_frame + frame_bytes + self.overhead) * 8 / rate_bps

    def tc_args(self) -> list[str]:
        return [
            "tbf",
            "rate",
            f"{self.rate_mbit:g}mbit",
            "burst",
            self.burst,
            "latency",
            self.latency,
            "overhead",
            str(self.overhead),
        ]


@dataclass(frozen=True)
class TopologyConfig:
    pc_ip: str = "10.77.0.1"
    dut_ip: str = "10.77.0.2"
    prefix_len: int = 24
    dut_mac: str = "02:00:00:00:00:02"


def _run(args: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise BenchError(f"`{' '.join(args)}` failed: {detail[-1] if detail else proc.returncode}")
    return proc


def list_namespaces() -> list[str]:
    out = _run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def pid_alive(pid: int) -> bool:
    """Whether process `pid` still exists (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_namespace_processes(ns: str, grace_s: float = 2.0) -> None:
    """SIGTERM every process in the namespace, then SIGKILL what is left after grace_s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = [int(p) for p in _run(["ip", "netns", "pids", ns], check=False).stdout.split()]
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if not _run(["ip", "netns", "pids", ns], check=False).stdout.split():
                return
            time.sleep(0.05)


def delete_namespace(ns: str) -> None:
    kill_namespace_processes(ns)
    _run(["ip", "netns", "delete", ns], check=False)


def delete_run_namespaces(pid: int) -> list[str]:
    """Deletes the namespaces a run (process `pid`) created, with every process in them."""
    removed = []
    for ns in list_namespaces():
        if run_of(ns) == pid:
            delete_namespace(ns)
            removed.append(ns)
    return removed


def run_of(name: str) -> int | None:
    """The pid of the run that made namespace `name` (hil-<pid>-<n>-<role>); None: not a run's."""
    m = _NAME_RE.match(name)
    return int(m.group(1)) if m else None


def cleanup_stale() -> list[str]:
    """Deletes namespaces of earlier runs whose creating process is gone. Returns their names."""
    removed = []
    for ns in list_namespaces():
        if (run := run_of(ns)) is not None and not pid_alive(run):
            delete_namespace(ns)
            removed.append(ns)
    return removed


def require_root() -> None:
    if os.geteuid() != 0:
        raise BenchError(
            "the virtual bench needs root (CAP_NET_ADMIN) to create network namespaces, "
            "veth, bridge and tap: run the suite as root (e.g. sudo)"
        )


_instance_counter = 0


@dataclass
class VirtualTopology:
    """Creates the topology on enter and always removes it on exit."""

    config: TopologyConfig = field(default_factory=TopologyConfig)
    pc_ns: str = ""
    dut_ns: str = ""
    shaping: TbfShaping | None = None
    # where the bench runs on the PC's CPUs (hil.plumbing.cpu_plan): each link's receive work on one
    # CPU; the DUT's program is placed by its kind when it starts. None: the scheduler decides
    cpu_plan: CpuPlan | None = None
    placement: str = ""  # the plan as applied, for the report's environment (hil.plumbing.links)
    # a second DUT's tap on the same bridge (DUT to DUT): with shaping, each DUT's tap is shaped
    # too, so every frame between the two DUTs crosses one tbf at the link's rate, as the PC's do
    partner: bool = False
    tap: str = TAP  # the tap the DUT of this view runs on (a partner's view: PARTNER_TAP)

    def __post_init__(self) -> None:
        global _instance_counter
        _instance_counter += 1
        base = f"{NETNS_PREFIX}{os.getpid()}-{_instance_counter}"
        self.pc_ns = self.pc_ns or f"{base}-pc"
        self.dut_ns = self.dut_ns or f"{base}-dut"

    def __enter__(self) -> Self:
        self.create()
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    def create(self) -> None:
        require_root()
        cleanup_stale()
        c = self.config
        pc, dut = self.pc_ns, self.dut_ns
        steps = [
            ["ip", "netns", "add", pc],
            ["ip", "netns", "add", dut],
            bridge_netfilter_off(dut),
            ["ip", "link", "add", PC_IF, "netns", pc, "type", "veth", "peer", "name", DUT_IF, "netns", dut],
            ["ip", "-n", pc, "link", "set", "lo", "up"],
            ["ip", "-n", dut, "link", "set", "lo", "up"],
            ["ip", "-n", pc, "addr", "add", f"{c.pc_ip}/{c.prefix_len}", "dev", PC_IF],
            ["ip", "-n", pc, "link", "set", PC_IF, "up"],
            plain_bridge(dut, BRIDGE),
            ["ip", "-n", dut, "tuntap", "add", "dev", TAP, "mode", "tap"],
            ["ip", "-n", dut, "link", "set", TAP, "master", BRIDGE],
            ["ip", "-n", dut, "link", "set", DUT_IF, "master", BRIDGE],
            ["ip", "-n", dut, "link", "set", TAP, "up"],
            ["ip", "-n", dut, "link", "set", DUT_IF, "up"],
            ["ip", "-n", dut, "link", "set", BRIDGE, "up"],
        ]
        if self.partner:
            steps += [
                ["ip", "-n", dut, "tuntap", "add", "dev", PARTNER_TAP, "mode", "tap"],
                ["ip", "-n", dut, "link", "set", PARTNER_TAP, "master", BRIDGE],
                ["ip", "-n", dut, "link", "set", PARTNER_TAP, "up"],
            ]
        try:
            for step in steps:
                _run(step)
            check_bridge_netfilter_off(dut)
        except BenchError:
            self.destroy()
            raise
        if self.cpu_plan is not None:  # frames into the DUT on its core (its MAC), into the PC on the bench's
            steer_receive(self.exec_prefix(pc), PC_IF, self.cpu_plan.bench_cpus, self.cpu_plan)
            for dev in (DUT_IF, TAP, *([PARTNER_TAP] if self.partner else [])):
                steer_receive(self.exec_prefix(dut), dev, self.cpu_plan.dut_cpus, self.cpu_plan)

    def partner_view(self, dut_ip: str, dut_mac: str) -> VirtualTopology:
        """The link of the second DUT (partner), as its kind sees a virtual link: the same namespaces,
        its own tap; made and removed with this topology (never created on its own)."""
        if not self.partner:
            raise BenchError("this virtual link has no second DUT's tap (the bench file's DUT has no partner:)")
        config = TopologyConfig(self.config.pc_ip, dut_ip, self.config.prefix_len, dut_mac)
        view = VirtualTopology(config, pc_ns=self.pc_ns, dut_ns=self.dut_ns, cpu_plan=self.cpu_plan, tap=PARTNER_TAP)
        view.placement = self.placement
        return view

    def _shaped_ends(self) -> tuple[tuple[str, str], ...]:
        """(namespace, device) of every egress the link's shaping is on: both veth ends, and with a
        partner both DUTs' taps (the frames toward each DUT, from the PC or from the other DUT)."""
        taps = ((self.dut_ns, TAP), (self.dut_ns, PARTNER_TAP)) if self.partner else ()
        return ((self.pc_ns, PC_IF), (self.dut_ns, DUT_IF), *taps)

    def shape(self, shaping: TbfShaping) -> None:
        """Shapes both directions of the PC<->DUT link.

        gso_max_segs 1 makes the PC's stack hand the link single frames, as a NIC does after
        segmentation offload, so tbf charges the per-frame overhead for every frame (with GSO
        packets it would charge it once per burst of segments and overstate the goodput).
        """
        for ns, dev in self._shaped_ends():
            _run(["ip", "-n", ns, "link", "set", "dev", dev, "gso_max_segs", "1"])
            _run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", *shaping.tc_args()])
        self.shaping = shaping

    def unshape(self) -> None:
        """Removes the shaping: the link runs as fast as the host can move frames."""
        for ns, dev in self._shaped_ends():
            _run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", dev, "root"], check=False)
            _run(["ip", "-n", ns, "link", "set", "dev", dev, "gso_max_segs", str(GSO_MAX_SEGS_DEFAULT)])
        self.shaping = None

    def inject_loss(self, loss_pct: float) -> None:
        """Drops loss_pct % of the frames crossing the DUT's bridge, both ways (nftables)."""
        per_10k = round(loss_pct * 100)
        if per_10k <= 0:
            return
        ruleset = (
            "table bridge hil_loss {\n"
            "  chain forward {\n"
            "    type filter hook forward priority 0; policy accept;\n"
            f"    numgen random mod 10000 < {per_10k} counter drop\n"
            "  }\n"
            "}\n"
        )
        proc = subprocess.run(
            [*self.exec_prefix(self.dut_ns), "nft", "-f", "-"],
            input=ruleset,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise BenchError(f"cannot inject {loss_pct} % loss with nftables: {proc.stderr.strip() or proc.returncode}")

    def loss_counter(self) -> int | None:
        """Frames dropped so far by the injected loss (None when no loss is injected)."""
        argv = [*self.exec_prefix(self.dut_ns), "nft", "list", "table", "bridge", "hil_loss"]
        out = subprocess.run(argv, capture_output=True, text=True, check=False)
        m = re.search(r"counter packets (\d+)", out.stdout)
        return int(m.group(1)) if out.returncode == 0 and m else None

    def exec_prefix(self, ns: str) -> list[str]:
        return ["ip", "netns", "exec", ns]

    def destroy(self) -> None:
        for ns in (self.pc_ns, self.dut_ns):
            if ns in list_namespaces():
                delete_namespace(ns)
