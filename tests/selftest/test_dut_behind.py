"""A bench of two DUTs (`peer.dut`: a DUT behind a DUT in the path): the bench file's checks, one
clear message each, and the kill that names which DUT (--inject-dut-kill CASE@SECONDS@DUT)."""

from pathlib import Path

import pytest

from hil.config.errors import ConfigError
from hil.dut.bench_file import load_bench
from hil.dut.fault_injection import DutKill, parse_kill

pytestmark = pytest.mark.selftest

BENCH = Path("bench") / "bridge-endpoint.yaml"
FRONT = """  - name: front
    kind: virtual
    role: in_path
    firmware: {config: bridge}
    thresholds: bridge-virtual
    peer: {ip: 10.77.0.3, dut: BEHIND}
"""
BEHIND = """  - name: back
    kind: virtual
    network: {dut_ip: IP, dut_mac: "MAC"}
    thresholds: virtual-100m
"""


def bench(tmp_path: Path, behind: str = "back", ip: str = "10.77.0.3", mac: str = "02:00:00:00:00:03",
          extra: str = "") -> Path:  # fmt: skip
    text = "duts:\n" + FRONT.replace("BEHIND", behind) + BEHIND.replace("IP", ip).replace("MAC", mac) + extra
    path = tmp_path / "bench.yaml"
    path.write_text(text)
    return path


def test_the_project_bench_of_two_duts_loads() -> None:
    front, behind = load_bench(BENCH).duts
    assert front.in_path and front.peer is not None and front.peer.dut == behind.name
    assert behind.role == "endpoint" and behind.network.dut_ip == front.peer.ip
    assert front.peer.ssh is None and front.peer.netns is None


def test_a_well_formed_pair_loads(tmp_path: Path) -> None:
    front, behind = load_bench(bench(tmp_path)).duts
    assert front.peer is not None and front.peer.dut == "back" == behind.name


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"behind": "nobody"}, "peer.dut 'nobody' is not a DUT of this bench file (it has back, front)"),
        ({"behind": "front"}, "a DUT cannot be behind itself"),
        ({"ip": "10.77.0.9"}, "its network.dut_ip 10.77.0.9 must be the peer's address peer.ip 10.77.0.3"),
        ({"mac": "02:00:00:00:00:02"}, "both DUTs have MAC 02:00:00:00:00:02"),
        ({"extra": "  - name: third\n    kind: virtual\n    role: in_path\n    thresholds: bridge-virtual\n"
                   "    firmware: {config: bridge}\n    peer: {ip: 10.77.0.3, dut: back}\n"},
         "it is already behind DUT front"),
    ],
)  # fmt: skip
def test_a_bad_pair_gets_one_message_naming_it(tmp_path: Path, kwargs: dict[str, str], message: str) -> None:
    path = bench(tmp_path, **kwargs)
    with pytest.raises(ConfigError) as err:
        load_bench(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_dut_behind_ends_the_traffic(tmp_path: Path) -> None:
    path = bench(tmp_path)
    path.write_text(path.read_text() + "    role: in_path\n    peer: {ip: 10.77.0.4}\n    firmware: {config: bridge}\n")
    with pytest.raises(ConfigError, match=r"must run on the bench PC with a console and end the traffic"):
        load_bench(path)


def test_the_peer_is_reached_one_way(tmp_path: Path) -> None:
    path = bench(tmp_path)
    path.write_text(path.read_text().replace("dut: back}", "dut: back, ssh: {host: 169.254.77.2}}"))
    with pytest.raises(ConfigError, match=r"not ssh and dut"):
        load_bench(path)


def test_the_kill_names_its_dut() -> None:
    assert parse_kill("baseline@1.5") == ("baseline", 1.5, None)
    assert parse_kill("baseline@2@endpoint-dut") == ("baseline", 2.0, "endpoint-dut")
    assert parse_kill("@") == ("", 1.0, None)
    kill = DutKill("udp@60@nobody")
    with pytest.raises(ValueError, match="no DUT named 'nobody' in this case"):
        kill.arm("test[udp-uplink]", {"bridge-dut": 1, "endpoint-dut": 2})
    kill = DutKill("tcp@60@endpoint-dut")
    kill.arm("test[udp-uplink]", {"bridge-dut": 1, "endpoint-dut": 2})  # not this case: nothing armed
    assert not kill.done
    kill.arm("test[tcp-uplink]", {"bridge-dut": 1, "endpoint-dut": 2})
    assert kill.done
    kill.disarm()  # 60 s: never fires
