"""The link of a real board: the PC's bench NIC, wired to the board, already configured by the
engineer (pc_ip on that NIC, in the root namespace or in network.pc_netns). The suite creates no
namespace and shapes nothing: the link is what the cable and the PHYs negotiate."""

from __future__ import annotations

from hil.errors import BenchError


class HardwareLink:
    shaping = None

    def __init__(self, pc_netns: str | None) -> None:
        self.pc_ns = pc_netns

    def exec_prefix(self, ns: str | None) -> list[str]:
        return ["ip", "netns", "exec", ns] if ns else []

    def shape(self, shaping: object) -> None:
        raise BenchError("a real board's link cannot be shaped by the suite")

    def unshape(self) -> None:
        """Nothing to remove: a real link is never shaped."""

    def inject_loss(self, loss_pct: float) -> None:
        if loss_pct:
            raise BenchError("loss cannot be injected on a real board's link")

    def loss_counter(self) -> int | None:
        return None
