"""A DUT reserved through a labgrid place: the coordinator's lock, so runs on several runners and
bench PCs share boards without a lock of the suite's own, and the place's resources (the
exporter's RFC 2217 console, the PC's bench interface, the debug probe's descriptor).

labgrid lives in its own virtual environment (.venv-labgrid: its pytest plugin and pyserial fork
must not enter the suite's); tools/labgrid_client.py, run there, answers in JSON.

Who holds a lock is `host/user` at the coordinator. The suite locks as `<user>:hil-<pid>-<start>`
(the run's process id and its start time in clock ticks since boot), so a lock left by a run that
was killed (SIGKILL, a runner's timeout) is recognised on the next start on the same host - that
process no longer exists - named, and released; a lock held by anyone else is waited for (bounded),
then the run stops with one line naming the holder.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import allure

from hil.config.sections import DutBase, LabgridConfig
from hil.errors import BenchError
from hil.paths import PROJECT_ROOT

LABGRID_PYTHON = PROJECT_ROOT / ".venv-labgrid" / "bin" / "python"
PLACE_TOOL = PROJECT_ROOT / "tools" / "labgrid_client.py"
TOOL_TIMEOUT_S = 60.0
POLL_S = 2.0
RUN_TAG = ":hil-"  # user:hil-<pid>-<start ticks>
# "host/user" of a parent that holds the place for this run and its siblings (./suite bisect: one
# lock for the whole bisection); a run finding the place held by exactly that holder uses it and
# leaves the release to the parent
HOLDER_ENV = "HIL_LABGRID_HOLDER"

_held: dict[str, PlaceLock] = {}  # places this process holds: released by last_resort_release()
_held_lock = threading.Lock()


def process_start_ticks(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (/proc/PID/stat field 22); None when gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def run_user(pid: int | None = None) -> str:
    """The labgrid user a run of the suite locks as: `<user>:hil-<pid>-<start ticks>`."""
    pid = pid or os.getpid()
    return f"{getpass.getuser()}{RUN_TAG}{pid}-{process_start_ticks(pid)}"


@dataclass(frozen=True)
class Holder:
    """Who holds a place, as the coordinator says: `host/user`."""

    text: str

    @property
    def host(self) -> str:
        return self.text.split("/", 1)[0]

    @property
    def user(self) -> str:
        return self.text.split("/", 1)[-1]

    def run(self) -> tuple[int, int] | None:
        """(pid, start ticks) when a run of the suite holds it."""
        _, tag, rest = self.user.partition(RUN_TAG)
        pid, _, start = rest.partition("-")
        return (int(pid), int(start)) if tag and pid.isdigit() and start.isdigit() else None

    def stale_on(self, hostname: str) -> str | None:
        """Why the lock is stale (a run of the suite on this host that no longer exists), else None."""
        run = self.run()
        if run is None or self.host != hostname:
            return None
        pid, start = run
        now = process_start_ticks(pid)
        if now is None:
            return f"run pid {pid} on this host is gone (killed?)"
        if now != start:
            return f"run pid {pid} on this host is gone (the pid now belongs to another process)"
        return None


@dataclass(frozen=True)
class PlaceResources:
    """What the locked place gives the run."""

    place: str
    coordinator: str
    holder: str
    console_url: str | None  # rfc2217://host:port?ign_set_control (pyserial's URL for the exporter's ser2net)
    interface: tuple[str, str] | None  # (exporter host, ifname): the PC's bench NIC
    probe: dict[str, object] = field(default_factory=dict)  # the exporter's descriptor (target, serial, tool)

    def describe(self) -> str:
        parts = [f"place {self.place} at {self.coordinator}, locked as {self.holder}"]
        if self.console_url:
            parts.append(f"console {self.console_url}")
        if self.interface:
            parts.append(f"NIC {self.interface[1]} (exporter {self.interface[0]})")
        if self.probe:
            parts.append("probe " + ", ".join(f"{k} {v}" for k, v in sorted(self.probe.items()) if k != "avail"))
        return "; ".join(parts)


class PlaceLock:
    """The lock of one labgrid place for the run: acquire (bounded wait), resources, release."""

    def __init__(self, place: str, coordinator: str, wait_s: float, say: Callable[[str], None] = print) -> None:
        self.place = place
        self.coordinator = coordinator
        self.wait_s = wait_s
        self.say = say
        self.user = run_user()
        self.hostname = socket.gethostname()
        self.held = False

    def _tool(self, *args: str) -> tuple[int, dict[str, object]]:
        if not LABGRID_PYTHON.exists():
            raise BenchError(f"labgrid is not installed in {LABGRID_PYTHON.parent.parent} (./suite setup installs it)")
        env = {**os.environ, "LG_COORDINATOR": self.coordinator, "LG_USERNAME": self.user, "LG_HOSTNAME": self.hostname}
        argv = [str(LABGRID_PYTHON), str(PLACE_TOOL), *args]
        try:
            out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise BenchError(
                f"labgrid place {self.place}: no answer from {self.coordinator} in {TOOL_TIMEOUT_S:g} s"
            ) from None
        try:
            answer = json.loads(out.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
            raise BenchError(f"labgrid place {self.place}: the labgrid client failed: {tail}") from None
        if out.returncode == 2:
            raise BenchError(f"labgrid place {self.place}: {answer.get('error')} (coordinator {self.coordinator})")
        return out.returncode, answer

    def status(self) -> dict[str, object]:
        """What the coordinator says of the place (its resources, who holds it), locking nothing."""
        rc, answer = self._tool("status", self.place)
        if rc != 0:
            raise BenchError(f"labgrid place {self.place}: {answer.get('error')} (coordinator {self.coordinator})")
        return answer

    def acquire(self) -> PlaceResources:
        """Locks the place: a stale lock of a killed run on this host is named and released; a
        lock held by anyone else is waited for up to wait_s, then a BenchError names the holder."""
        deadline = time.monotonic() + self.wait_s
        waited = False
        while True:
            rc, answer = self._tool("lock", self.place)
            if rc == 0:
                break
            holder = Holder(str(answer.get("acquired_by") or ""))
            if not holder.text:
                raise BenchError(f"labgrid place {self.place}: lock refused: {answer.get('error')}")
            if holder.text == os.environ.get(HOLDER_ENV):  # held for this run: the parent releases it
                self.say(f"hil: labgrid place {self.place}: held for this run by {holder.text}")
                return self._resources(answer)
            stale = holder.stale_on(self.hostname)
            if stale is not None:
                self.say(f"hil: labgrid place {self.place}: stale lock of {holder.text} ({stale}); releasing it")
                self._tool("release-from", self.place, "--holder", holder.text)
                continue
            if time.monotonic() >= deadline:
                how = f"waited {self.wait_s:g} s" if self.wait_s else "not waiting (wait 0)"
                raise BenchError(
                    f"labgrid place {self.place} is held by {holder.text} ({how}); "
                    f"if that run is gone: ./suite labgrid-unlock {self.place}"
                )
            if not waited:
                self.say(f"hil: labgrid place {self.place} is held by {holder.text}: waiting up to {self.wait_s:g} s")
                waited = True
            time.sleep(min(POLL_S, max(0.1, deadline - time.monotonic())))
        self.held = True
        with _held_lock:
            _held[self.place] = self
        return self._resources(answer)

    def _resources(self, answer: dict[str, object]) -> PlaceResources:
        unavailable = [
            f"{name} ({r.get('cls')})"
            for name, r in dict(answer.get("resources") or {}).items()  # type: ignore[union-attr]
            if isinstance(r, dict) and not r.get("avail", False)
        ]
        if unavailable:
            self.release()
            raise BenchError(
                f"labgrid place {self.place}: resources not available at their exporter: {', '.join(unavailable)}"
            )
        serial = answer.get("serial")
        url = None
        if isinstance(serial, dict) and serial.get("port"):
            # ign_set_control: ser2net on a pseudo-terminal (and some USB adapters) never answers
            # the modem-control option pyserial waits for
            url = f"{serial.get('protocol') or 'rfc2217'}://{serial['host']}:{serial['port']}?ign_set_control"
        netif = answer.get("network_interface")
        interface = (str(netif["host"]), str(netif["ifname"])) if isinstance(netif, dict) else None
        probe = answer.get("debug_probe")
        probe_fields = {k: v for k, v in probe.items() if k not in ("avail", "cls")} if isinstance(probe, dict) else {}
        return PlaceResources(self.place, self.coordinator, self.holder, url, interface, probe_fields)

    @property
    def holder(self) -> str:
        """Who this lock holds the place as at the coordinator ("host/user")."""
        return f"{self.hostname}/{self.user}"

    def release(self) -> None:
        """Unlocks the place if this run holds it (end of the run, Ctrl-C, a failure)."""
        if not self.held:
            return
        self.held = False
        with _held_lock:
            _held.pop(self.place, None)
        try:
            rc, answer = self._tool("unlock", self.place)
        except BenchError as exc:
            self.say(f"hil: labgrid place {self.place} not released: {exc}")
            return
        if rc != 0:
            self.say(f"hil: labgrid place {self.place} not released: {answer.get('error')}")


def places_described(held: dict[str, PlaceResources]) -> str:
    """The run's places for the report's environment: one as it is, several each with its DUT."""
    if len(held) == 1:
        return next(iter(held.values())).describe()
    return " | ".join(f"DUT {name}: {res.describe()}" for name, res in held.items())


def apply_place(cfg: DutBase, res: PlaceResources) -> DutBase:
    """The DUT's bench section with what the place gives: its console at the exporter's RFC 2217
    port, its probe's serial number and target; the place's bench NIC is checked to be on this PC
    (in network.pc_netns) holding pc_ip, as the bench file says."""
    update: dict[str, object] = {}
    if cfg.HAS_CONSOLE:
        if res.console_url is None:
            raise BenchError(f"labgrid place {res.place} has no serial port (NetworkSerialPort) for the DUT's console")
        update["console"] = cfg.console.model_copy(update={"port": res.console_url})
    probe = getattr(cfg, "probe", None)
    if probe is not None and res.probe:
        serial, target = res.probe.get("serial"), res.probe.get("target")
        update["probe"] = probe.model_copy(
            update={"unique_id": str(serial) if serial else probe.unique_id, "target": str(target or probe.target)}
        )
    if res.interface is not None:
        check_interface(res, cfg.network.pc_netns, cfg.network.pc_ip)
    return cfg.model_copy(update=update)


def check_interface(res: PlaceResources, netns: str | None, pc_ip: str) -> None:
    """The place's bench NIC exists on this PC (the traffic generator runs here) and holds pc_ip."""
    assert res.interface is not None
    host, ifname = res.interface
    prefix = ["ip", "-n", netns] if netns else ["ip"]
    where = f"namespace {netns}" if netns else "the root namespace"
    out = subprocess.run(
        [*prefix, "-o", "-4", "addr", "show", "dev", ifname], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise BenchError(
            f"labgrid place {res.place}: its network interface {ifname} (exporter {host}) is not on this PC "
            f"in {where}: run the suite on the bench PC that exports it, or set network.pc_netns"
        )
    if f" {pc_ip}/" not in out.stdout:
        raise BenchError(f"labgrid place {res.place}: interface {ifname} in {where} does not hold pc_ip {pc_ip}")


def last_resort_release() -> list[str]:
    """Releases every place this process still holds (the interrupt watchdog's cleanup)."""
    with _held_lock:
        locks = list(_held.values())
    for lock in locks:
        lock.release()
    return [lock.place for lock in locks]


def unlock_by_hand(place: str, coordinator: str) -> str:
    """`./suite labgrid-unlock PLACE`: releases the place whoever holds it; says whose lock it was."""
    lock = PlaceLock(place, coordinator, 0)
    rc, answer = lock._tool("status", place)
    holder = answer.get("acquired_by")
    if not holder:
        return f"labgrid place {place} is not locked"
    rc, answer = lock._tool("unlock", place, "--kick")
    if rc != 0:
        raise BenchError(f"labgrid place {place}: unlock refused: {answer.get('error')}")
    return f"labgrid place {place}: released the lock of {holder}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./suite labgrid-unlock", description="Releases a labgrid place's lock, whoever holds it."
    )
    parser.add_argument("place")
    parser.add_argument(
        "--coordinator", default=os.environ.get("LG_COORDINATOR"), help="HOST:PORT (default $LG_COORDINATOR)"
    )
    opt = parser.parse_args(argv)
    if not opt.coordinator:
        parser.error("no coordinator: give --coordinator HOST:PORT or set LG_COORDINATOR")
    try:
        print(unlock_by_hand(opt.place, opt.coordinator))
    except BenchError as exc:
        print(f"labgrid-unlock: {exc}", file=sys.stderr)
        return 75
    return 0


@contextlib.contextmanager
def reserved(section: LabgridConfig, say: Callable[[str], None]) -> Iterator[PlaceResources]:
    """The bench file's labgrid place locked for the context (BenchError when it cannot be had:
    held by another run beyond the wait, no coordinator, a resource gone), released at its end,
    also after a failure or Ctrl-C; what the place holds is said and attached to the report."""
    assert section.coordinator is not None  # resolved with the options (hil.run_config.with_labgrid)
    lock = PlaceLock(section.place, section.coordinator, section.wait_s, say=say)
    resources = lock.acquire()
    try:
        say(f"hil: labgrid {resources.describe()}")
        allure.attach(resources.describe(), name="labgrid place", attachment_type=allure.attachment_type.TEXT)
        yield resources
    finally:
        lock.release()


@contextlib.contextmanager
def reserved_all(sections: dict[str, LabgridConfig], say: Callable[[str], None]) -> Iterator[dict[str, PlaceResources]]:
    """Every labgrid place of the run's DUTs (DUT name -> its section), held together for the
    context: locked in one order (coordinator, then place) so two runs wanting the same boards never
    each hold one and wait for the other; one that cannot be had releases those already held and
    raises a BenchError naming its DUT; all released at the end, also after a failure or Ctrl-C."""
    order = sorted(sections.items(), key=lambda item: (str(item[1].coordinator), item[1].place))
    with contextlib.ExitStack() as stack:
        held: dict[str, PlaceResources] = {}
        for name, section in order:
            try:
                held[name] = stack.enter_context(reserved(section, say))
            except BenchError as exc:
                raise BenchError(f"DUT {name!r}: {exc}") from exc
        if len(held) > 1:
            say(f"hil: labgrid: the run holds {len(held)} places: " + ", ".join(
                f"{res.place} (DUT {name})" for name, res in held.items()))  # fmt: skip
        yield held


if __name__ == "__main__":
    sys.exit(main())
