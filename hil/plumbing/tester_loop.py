"""The tester without the device: the bench PC's and the peer's ends joined directly, as RFC 9971
recommends before a device is measured (on a real bench: a loop cable, or the two NICs joined).

    netns hil-<pid>-<n>-pc              netns hil-<pid>-<n>-peer
    +---------------------+  veth pair  +------------------------+
    | veth-pc      PC_IP  |<----------->| veth-peer      PEER_IP |
    +---------------------+             +------------------------+

Both ends are shaped as the bench's PC-side link is (tbf, the medium's per-frame overhead), so the
ceilings measured here are the tester's own on the same medium: the frame tester's sender, its
receiver and the host that runs them. The namespaces carry netns.py's names, so the crash
cleanups remove them too; `destroy` always runs on exit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Self

from hil.plumbing import in_path
from hil.plumbing.in_path import PC_IF, PEER_IF, InPathConfig
from hil.plumbing.netns import TbfShaping, _run, cleanup_stale, delete_namespace, list_namespaces, require_root

# far above the in-path topologies' numbers: one process never picks the same name twice
_NUMBER_BASE = 950_000
_counter = 0


@dataclass
class TesterLoop:
    config: InPathConfig
    shaping: TbfShaping | None
    pc_ns: str = ""
    peer_ns: str = ""
    _made: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        global _counter
        _counter += 1
        pc, _, peer = in_path._namespace_names(_NUMBER_BASE + _counter)
        self.pc_ns = self.pc_ns or pc
        self.peer_ns = self.peer_ns or peer

    def __enter__(self) -> Self:
        self.create()
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    def create(self) -> None:
        require_root()
        cleanup_stale()
        c = self.config
        try:
            for ns in (self.pc_ns, self.peer_ns):
                _run(["ip", "netns", "add", ns])
                self._made.append(ns)
                _run(["ip", "-n", ns, "link", "set", "lo", "up"])
            _run(
                [
                    "ip",
                    "link",
                    "add",
                    PC_IF,
                    "netns",
                    self.pc_ns,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    PEER_IF,
                    "netns",
                    self.peer_ns,
                ]
            )
            for ns, dev, ip in ((self.pc_ns, PC_IF, c.pc_ip), (self.peer_ns, PEER_IF, c.peer_ip)):
                _run(["ip", "-n", ns, "addr", "add", f"{ip}/{c.prefix_len}", "dev", dev])
                _run(["ip", "-n", ns, "link", "set", dev, "up"])
                if self.shaping is not None:
                    _run(["ip", "-n", ns, "link", "set", "dev", dev, "gso_max_segs", "1"])
                    _run([*self.exec_prefix(ns), "tc", "qdisc", "replace", "dev", dev, "root", *self.shaping.tc_args()])
        except BaseException:
            self.destroy()
            raise

    def exec_prefix(self, ns: str) -> list[str]:
        return ["ip", "netns", "exec", ns]

    def destroy(self) -> None:
        existing = set(list_namespaces())
        for ns in (self.pc_ns, self.peer_ns):
            if ns in existing:
                delete_namespace(ns)
        self._made.clear()
