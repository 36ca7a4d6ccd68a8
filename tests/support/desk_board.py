"""A board on the desk, made of the virtual bench: the project's firmware running on the virtual
link (bench/virtual.yaml's DUT), its console relayed onto a pseudo-terminal nobody holds - as a
USB-UART adapter's /dev/ttyUSB0 is, until a program opens it - and the PC's side of the link in a
namespace, holding pc_ip as a bench NIC would. A bench file of kind `preflashed` then describes
it as a user describes a board they flashed themselves."""

from __future__ import annotations

import contextlib
import os
import select
import tempfile
import threading
import time
import tty
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hil.dut.bench_file import DEFAULT_BENCH_FILE, load_bench
from hil.dut.kinds import make_adapter
from hil.plumbing.links import open_bench_link
from hil.plumbing.netns import VirtualTopology


@dataclass(frozen=True)
class DeskBoard:
    port: str  # the relay's pseudo-terminal: a serial device path only the user's program opens
    pc_netns: str
    pc_ip: str
    dut_ip: str

    def bench_file(self, path: Path, **changes: str) -> Path:
        """A `preflashed` bench file for it; `changes` replace its port, pc_ip or dut_ip."""
        v = {"port": self.port, "pc_ip": self.pc_ip, "dut_ip": self.dut_ip} | changes
        path.write_text(
            "name: desk\nduts:\n  - name: board-1\n    kind: preflashed\n"
            f"    console: {{port: {v['port']}, baud: 115200, boot_timeout_s: 5}}\n"
            f"    network: {{pc_ip: {v['pc_ip']}, dut_ip: {v['dut_ip']}, prefix_len: 24, pc_netns: {self.pc_netns}}}\n"
            "    link: {rate_mbit: 100, shaping: false}\n    thresholds: virtual-100m\n"
        )
        return path


def _relay(a: int, b: int, stop: threading.Event) -> None:
    """Copies bytes both ways between two pty masters until stopped (EIO: no one has the slave
    open yet, as with a serial device no program has opened)."""
    while not stop.is_set():
        ready, _, _ = select.select([a, b], [], [], 0.05)
        for src in ready:
            dst = b if src == a else a
            try:
                data = os.read(src, 4096)
                if data:
                    os.write(dst, data)
            except OSError:
                time.sleep(0.02)  # (a master reads EIO at once while its slave is closed)


@contextlib.contextmanager
def desk_board() -> Iterator[DeskBoard]:
    dut = load_bench(DEFAULT_BENCH_FILE).duts[0]
    with tempfile.TemporaryDirectory(prefix="hil-desk-") as tmp, open_bench_link(dut) as link:
        assert isinstance(link, VirtualTopology)
        adapter = make_adapter(dut, link, Path(tmp) / "dut")
        try:
            adapter.flash()
            # our side of the firmware's console, and a fresh pseudo-terminal whose slave only the user opens
            firmware_side = os.open(adapter.console_port, os.O_RDWR | os.O_NOCTTY)
            tty.setraw(firmware_side)
            master, slave = os.openpty()
            tty.setraw(slave)
            port = os.ttyname(slave)
            os.close(slave)
            stop = threading.Event()
            relay = threading.Thread(target=_relay, args=(firmware_side, master, stop), daemon=True)
            relay.start()
            try:
                yield DeskBoard(port, link.pc_ns, dut.network.pc_ip, dut.network.dut_ip)
            finally:
                stop.set()
                relay.join(2)
                os.close(master)
                os.close(firmware_side)
        finally:
            adapter.stop()
