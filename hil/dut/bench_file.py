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
from hil.config.sections import PcConfig, Strict
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
            if not (other.LOCAL and other.HAS_CONSOLE) or other.role != "endpoint":
                raise ValueError(
                    f"{where}: the partner must run on the bench PC with a console and end the traffic "
                    f"(kind {other.kind!r}, role {other.role!r})"
                )
            if getattr(first, "wifi", None) is not None or getattr(other, "wifi", None) is not None:
                raise ValueError(f"{where}: the DUT-to-DUT link is wired (no wifi: on either DUT)")
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


def load_bench(path: Path) -> BenchConfig:
    # a kind's section is reported as duts[0].link..., not duts[0].virtual.link...
    return load_model(path, BenchConfig, "a mapping with a `duts` list at the top level", hide_tags=set(kinds()))
