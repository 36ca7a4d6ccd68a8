"""The PC's bench NIC (a real board's link): an interface holds pc_ip, the DUT's address is on its
subnet and routed through it, its link is up at the bench file's rate or faster."""

from __future__ import annotations

import ipaddress
import json
import subprocess

from hil.config.sections import DutBase
from hil.doctor.finding import Finding, ok, problem


def _ip(netns: str | None, *args: str) -> object:
    argv = ["ip", *(["-n", netns] if netns else []), "-j", *args]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip() or f"{' '.join(argv)} failed")
    return json.loads(out.stdout or "[]")


def _speed(netns: str | None, ifname: str) -> int | None:
    argv = [*(["ip", "netns", "exec", netns] if netns else []), "cat", f"/sys/class/net/{ifname}/speed"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    try:
        speed = int(out.stdout.strip())
    except ValueError:
        return None
    return speed if speed > 0 else None


def pc_port(dut: DutBase) -> list[Finding]:
    net, where = dut.network, f"namespace {dut.network.pc_netns}" if dut.network.pc_netns else "this PC"
    try:
        links = _ip(net.pc_netns, "addr", "show")
    except (RuntimeError, ValueError, OSError) as exc:
        return [
            problem(
                "PC port",
                f"cannot list the interfaces of {where}: {exc}",
                "create the namespace network.pc_netns names, or set it null",
            )
        ]
    assert isinstance(links, list)
    holder, prefix_len, others = None, 0, []
    for link in links:
        for a in link.get("addr_info", []):
            if a.get("family") != "inet" or link.get("ifname") == "lo":
                continue
            if a.get("local") == net.pc_ip:
                holder, prefix_len = link, int(a.get("prefixlen", 32))
            else:
                others.append(f"{link.get('ifname')} {a.get('local')}/{a.get('prefixlen')}")
    if holder is None:
        return [
            problem(
                "PC port",
                f"no interface of {where} holds pc_ip {net.pc_ip} (IPv4 there: {', '.join(others) or 'none'})",
                f"on the NIC cabled to the DUT: ip addr add {net.pc_ip}/{net.prefix_len} dev <NIC> "
                "(ip -br link lists them), or correct network.pc_ip",
            )
        ]
    ifname = str(holder.get("ifname"))
    found = [ok("PC port", f"{ifname} holds {net.pc_ip}/{prefix_len} ({where})")]
    subnet = ipaddress.ip_network(f"{net.pc_ip}/{prefix_len}", strict=False)
    if ipaddress.ip_address(net.dut_ip) not in subnet:
        found.append(
            problem(
                "PC port subnet",
                f"dut_ip {net.dut_ip} is not in {ifname}'s subnet {subnet}",
                f"give {ifname} the prefix of the DUT's network (network.prefix_len {net.prefix_len})",
            )
        )
    flags = holder.get("flags", [])
    if "UP" not in flags or "NO-CARRIER" in flags or holder.get("operstate") == "DOWN":
        found.append(
            problem(
                "PC port link",
                f"{ifname} is down or has no carrier ({','.join(flags)})",
                f"ip link set {ifname} up; check the cable and that the DUT is powered",
            )
        )
    else:
        speed = _speed(net.pc_netns, ifname)
        if speed is not None and speed < dut.link.rate_mbit:
            found.append(
                problem(
                    "PC port link",
                    f"{ifname} negotiated {speed} Mbit/s, the bench file's link is {dut.link.rate_mbit:g}",
                    "check the cable and the switch port (ethtool " + ifname + ")",
                )
            )
        else:
            found.append(ok("PC port link", f"{ifname} up, {f'{speed} Mbit/s' if speed else 'speed not reported'}"))
    try:
        route = _ip(net.pc_netns, "route", "get", net.dut_ip)
        dev = route[0].get("dev") if isinstance(route, list) and route else None
    except (RuntimeError, ValueError, OSError) as exc:
        dev = f"none ({exc})"
    if dev != ifname:
        found.append(
            problem(
                "route to DUT",
                f"{net.dut_ip} is routed via {dev}, not {ifname}",
                f"remove the overlapping route or address on {dev} (ip route show)",
            )
        )
    else:
        found.append(ok("route to DUT", f"{net.dut_ip} via {ifname}"))
    return found
