"""The bench PC itself: its rights, the programs a run starts, their versions, its clock."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from hil.doctor.finding import Finding, ok, problem

CAP_NET_ADMIN, CAP_NET_RAW = 12, 13
CLOCKSOURCE = Path("/sys/devices/system/clocksource/clocksource0/current_clocksource")
# a clock read in jiffies ticks every 1-10 ms: a 0.05-ms ping or a 2-s trial cannot be timed by it
COARSE_CLOCKS = {"jiffies", "refined-jiffies"}
APT_HINT = "apt-get install {pkg} (./suite setup installs every package)"


def _effective_caps() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


def rights(local: bool) -> Finding:
    """Root, or for a real board's bench the two capabilities its traffic needs; a virtual bench
    creates namespaces and tap devices: root."""
    if os.geteuid() == 0:
        return ok("rights", "running as root")
    caps = _effective_caps()
    if not local and caps >> CAP_NET_ADMIN & 1 and caps >> CAP_NET_RAW & 1:
        return ok("rights", "not root, with CAP_NET_ADMIN and CAP_NET_RAW")
    need = "namespaces and tap devices" if local else "captures, raw frames and the PC port's settings"
    return problem(
        "rights",
        f"not root (uid {os.getuid()}): the bench needs it for {need}",
        "run it as root: sudo ./suite doctor ..., or from a root shell",
    )


def _version(argv: list[str], pattern: str) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(pattern, out.stdout + out.stderr)
    return m.group(1) if m else None


def iperf_versions() -> list[Finding]:
    """iperf 2 and iperf 3 on the PC, with the versions a run names in its report."""
    found = []
    for name, argv, pattern, pkg in (
        ("iperf 2", ["iperf", "-v"], r"iperf version (2\.\S+)", "iperf"),
        ("iperf 3", ["iperf3", "--version"], r"iperf (3\.\S+)", "iperf3"),
    ):
        if shutil.which(argv[0]) is None:
            found.append(problem(name, f"{argv[0]} is not on this PC's PATH", APT_HINT.format(pkg=pkg)))
            continue
        version = _version(argv, pattern)
        if version is None:
            found.append(
                problem(
                    name,
                    f"{shutil.which(argv[0])} does not say its version",
                    f"reinstall it: {APT_HINT.format(pkg=pkg)}",
                )
            )
        else:
            found.append(ok(name, f"{version} ({shutil.which(argv[0])})"))
    return found


def tools(local: bool) -> Finding:
    """The other programs a run starts: ping, captures, and on a virtual bench its plumbing."""
    wanted = {"ping": "iputils-ping", "tcpdump": "tcpdump", "ip": "iproute2"}
    if local:
        wanted |= {"tc": "iproute2", "nft": "nftables"}
    missing = [f"{tool} ({pkg})" for tool, pkg in wanted.items() if shutil.which(tool) is None]
    if missing:
        pkgs = " ".join(sorted({wanted[m.split()[0]] for m in missing}))
        return problem("tools", f"missing: {', '.join(missing)}", APT_HINT.format(pkg=pkgs))
    return ok("tools", ", ".join(wanted))


def clock_source(path: Path = CLOCKSOURCE) -> Finding:
    """The kernel's clock, which times every trial and ping."""
    try:
        name = path.read_text().strip()
    except OSError:
        return ok("clock source", "not readable here (the kernel's default)")
    if name in COARSE_CLOCKS:
        return problem(
            "clock source",
            f"{name}: ticks of 1-10 ms, coarser than the latencies measured",
            "boot with a fine clock (clocksource=tsc, or the platform's timer)",
        )
    return ok("clock source", name)
