"""The bench file: the PC, the DUTs (each in its kind's own section, chosen by `kind`: the kinds'
registry, hil.dut.kinds).

The one secret a bench has, a Wi-Fi passphrase, is never written in the file: `wifi.psk_env`
names the environment variable that holds it (SSH keys are files the bench file names).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

from pydantic import Field, model_validator

from hil.config.errors import load_model
from hil.config.sections import DutBase, PcConfig, Strict
from hil.dut.kinds import dut_section, kinds
from hil.paths import PROJECT_ROOT

DEFAULT_BENCH_FILE = PROJECT_ROOT / "bench" / "virtual.yaml"

DutSection = dut_section()  # the bench file's DUT entry: one model per kind, chosen by its `kind` tag


class BenchConfig(Strict):
    name: str = "bench"
    pc: PcConfig = PcConfig()
    duts: Annotated[list[DutSection], Field(min_length=1)]  # type: ignore[valid-type]

    @model_validator(mode="before")
    @classmethod
    def _no_secrets_list(cls, data: object) -> object:
        if isinstance(data, dict) and "secrets" in data:
            raise ValueError(
                "secrets: is gone: the Wi-Fi passphrase comes from the one environment variable the DUT's "
                "wifi.psk_env names (docs/benches.md); remove the `secrets:` list"
            )
        return data

    @model_validator(mode="after")
    def _unique_names(self) -> BenchConfig:
        names = [d.name for d in self.duts]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate DUT names: {', '.join(sorted(dup))}")
        return self

    @model_validator(mode="after")
    def _duts_behind(self) -> BenchConfig:
        """A DUT behind another (`peer.dut`): a DUT of this file, on the bench PC, with a console,
        an endpoint at the peer's address; behind one DUT only."""
        by_name = {d.name: d for d in self.duts}
        taken: dict[str, str] = {}
        for front in self.duts:
            name = front.peer.dut if front.peer is not None else None
            if name is None:
                continue
            where = f"DUT {front.name}: peer.dut {name!r}"
            behind = by_name.get(name)
            if behind is None:
                raise ValueError(f"{where} is not a DUT of this bench file (it has {', '.join(sorted(by_name))})")
            if behind is front:
                raise ValueError(f"{where}: a DUT cannot be behind itself")
            if name in taken:
                raise ValueError(f"{where}: it is already behind DUT {taken[name]}")
            taken[name] = front.name
            if not (behind.LOCAL and behind.HAS_CONSOLE) or behind.role != "endpoint":
                raise ValueError(
                    f"{where}: the DUT behind must run on the bench PC with a console and end the traffic "
                    f"(kind {behind.kind!r}, role {behind.role!r})"
                )
            if getattr(behind, "wifi", None) is not None:
                raise ValueError(f"{where}: the DUT behind a bridge is wired (no wifi:)")
            if behind.network.dut_ip != front.peer.ip:  # type: ignore[union-attr]
                raise ValueError(
                    f"{where}: its network.dut_ip {behind.network.dut_ip} must be the peer's address peer.ip "
                    f"{front.peer.ip}"  # type: ignore[union-attr]
                )
            if behind.network.dut_mac == front.network.dut_mac:
                raise ValueError(f"{where}: both DUTs have MAC {behind.network.dut_mac}: give network.dut_mac apart")
        return self

    @model_validator(mode="after")
    def _duts_beside(self) -> BenchConfig:
        """A DUT beside another on one link (`partner:`): a DUT of this file, on the bench PC, with a
        console, a wired endpoint in the PC's subnet at an address and MAC of its own; one pair."""
        by_name = {d.name: d for d in self.duts}
        behind = {d.peer.dut for d in self.duts if d.peer is not None and d.peer.dut is not None}
        taken: dict[str, str] = {}
        for first in self.duts:
            name = first.partner
            if name is None:
                continue
            where = f"DUT {first.name}: partner {name!r}"
            other = by_name.get(name)
            if other is None:
                raise ValueError(f"{where} is not a DUT of this bench file (it has {', '.join(sorted(by_name))})")
            if other is first:
                raise ValueError(f"{where}: a DUT cannot be its own partner")
            if name in taken or name in behind or other.partner is not None:
                raise ValueError(f"{where}: it is already in a pair or behind a DUT (one pair per bench file)")
            taken[name] = first.name
            if not other.HAS_CONSOLE or other.role != "endpoint":
                raise ValueError(
                    f"{where}: the partner must have a console and end the traffic "
                    f"(kind {other.kind!r}, role {other.role!r})"
                )
            if other.LOCAL != first.LOCAL:
                raise ValueError(
                    f"{where}: a DUT of the virtual bench and a board cannot share a link "
                    f"(kind {first.kind!r} with kind {other.kind!r}): both on the virtual bench, or two boards"
                )
            if not first.LOCAL:
                _boards_on_one_link(where, first, other)
            if getattr(first, "wifi", None) is not None or getattr(other, "wifi", None) is not None:
                _wifi_pair(where, first, other)
            net = ipaddress.IPv4Network(f"{first.network.pc_ip}/{first.network.prefix_len}", strict=False)
            ip = other.network.dut_ip
            if ipaddress.IPv4Address(ip) not in net or ip in (first.network.pc_ip, first.network.dut_ip):
                raise ValueError(
                    f"{where}: its network.dut_ip {ip} must be another address of the PC's subnet {net} "
                    f"(not the PC's {first.network.pc_ip} nor DUT {first.name}'s {first.network.dut_ip})"
                )
            if other.network.dut_mac == first.network.dut_mac:
                raise ValueError(f"{where}: both DUTs have MAC {other.network.dut_mac}: give network.dut_mac apart")
        return self

    @model_validator(mode="after")
    def _softaps_paired(self) -> BenchConfig:
        """A SoftAP, and a station whose access point is its partner, are one end of a Wi-Fi pair."""
        paired = {d.name for d in self.duts if d.partner is not None} | {d.partner for d in self.duts if d.partner}
        for dut in self.duts:
            wifi = getattr(dut, "wifi", None)
            if wifi is None or dut.name in paired:
                continue
            if wifi.mode == "softap":
                raise ValueError(
                    f"DUT {dut.name}: wifi.mode softap is the access point of a Wi-Fi pair: name its station "
                    "as the partner (partner: <the station DUT>)"
                )
            if wifi.ap == "partner":
                raise ValueError(f"DUT {dut.name}: wifi.ap partner needs a pair with a SoftAP (partner:)")
        return self


def _boards_on_one_link(where: str, first: DutBase, other: DutBase) -> None:
    """Two boards DUT to DUT: cabled to one switch with the PC's bench NIC, which only watches (it
    pings both at every bring-up), so both name the same PC port; the pair's theory is one link's
    rate, so both name the same (a faster board's port runs at the slower's in the pair)."""
    mine, theirs = first.network, other.network
    if (theirs.pc_ip, theirs.pc_netns, theirs.prefix_len) != (mine.pc_ip, mine.pc_netns, mine.prefix_len):
        a, b = (f"{n.pc_ip}/{n.prefix_len} in {n.pc_netns or 'the root namespace'}" for n in (mine, theirs))
        raise ValueError(
            f"{where}: two boards on one link share the PC's bench NIC: give both the same network.pc_ip, "
            f"pc_netns and prefix_len (DUT {first.name}: {a}, DUT {other.name}: {b})"
        )
    if other.link.rate_mbit != first.link.rate_mbit:
        raise ValueError(
            f"{where}: the traffic between two boards runs at the slower port's rate, the pair's theory: give both "
            f"the same link.rate_mbit (DUT {first.name} {first.link.rate_mbit:g}, DUT {other.name} "
            f"{other.link.rate_mbit:g} Mbit/s)"
        )


def _wifi_pair(where: str, first: DutBase, other: DutBase) -> None:
    """A Wi-Fi pair on the virtual bench: the DUT naming the partner is the SoftAP (it starts before
    its station joins), the partner its station with the same SSID; both the host firmware, with the
    project's console or ESP-IDF's iperf example's (the `espressif-v4` personality: its `ap` and
    `sta`, checked by its kind). The station says its access point is its partner (`wifi.ap: partner`)."""
    ap, station = getattr(first, "wifi", None), getattr(other, "wifi", None)
    if ap is None or station is None:
        raise ValueError(
            f"{where}: a Wi-Fi pair has wifi: on both DUTs (a SoftAP and its station); a wired pair on neither"
        )
    if ap.mode != "softap" or station.mode != "station":
        raise ValueError(
            f"{where}: in a Wi-Fi pair the DUT that names the partner is the SoftAP (wifi.mode: softap) and the "
            f"partner its station (wifi.mode: station); here {ap.mode} and {station.mode}"
        )
    for dut in (first, other):
        if not getattr(dut, "SIMULATED_RADIO", False):
            raise ValueError(
                f"{where}: a Wi-Fi pair is the virtual bench's host firmware on both sides (DUT {dut.name}: kind "
                f"{dut.kind!r})"
            )
    if station.ssid != ap.ssid:
        raise ValueError(f"{where}: the station's wifi.ssid {station.ssid!r} is not its SoftAP's {ap.ssid!r}")
    if station.ap != "partner":
        raise ValueError(
            f"{where}: the station joins the SoftAP of its pair, not a simulated one: give it wifi.ap: partner"
        )


def load_bench(path: Path) -> BenchConfig:
    # a kind's section is reported as duts[0].link..., not duts[0].virtual.link...
    return load_model(path, BenchConfig, "a mapping with a `duts` list at the top level", hide_tags=set(kinds()))
