"""A bench of two DUTs on one link (`partner:`, DUT to DUT): the bench file's checks, one clear
message each; which families run DUT to DUT and which are skipped saying why; the records that name
the pair and the way each record's traffic went."""

from pathlib import Path

import pytest
import yaml

from hil.config.errors import ConfigError
from hil.dut.bench_file import load_bench
from hil.results.recorder import CaseRecord, Recorder
from hil.run_config import bench_facts
from hil.scenarios.contract import PAIR_FAMILIES, collect, pair_skip
from hil.scenarios.profiles import PROFILES

pytestmark = pytest.mark.selftest

BENCH = Path("bench") / "pair.yaml"
FIRST = """  - name: a
    kind: virtual
    thresholds: virtual-20m
    partner: PARTNER
"""
SECOND = """  - name: b
    kind: virtual
    network: {dut_ip: IP, dut_mac: "MAC"}
    thresholds: virtual-20m
"""


def bench(tmp_path: Path, partner: str = "b", ip: str = "10.77.0.3", mac: str = "02:00:00:00:00:03",
          extra: str = "") -> Path:  # fmt: skip
    text = "duts:\n" + FIRST.replace("PARTNER", partner) + SECOND.replace("IP", ip).replace("MAC", mac) + extra
    path = tmp_path / "bench.yaml"
    path.write_text(text)
    return path


def test_the_project_bench_of_a_pair_loads() -> None:
    a, b = load_bench(BENCH).duts
    assert a.partner == b.name and a.role == b.role == "endpoint"
    assert a.network.dut_ip != b.network.dut_ip and a.network.dut_mac != b.network.dut_mac


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"partner": "nobody"}, "partner 'nobody' is not a DUT of this bench file (it has a, b)"),
        ({"partner": "a"}, "a DUT cannot be its own partner"),
        ({"ip": "10.78.0.3"}, "dut_ip 10.78.0.3 is not in the PC's subnet 10.77.0.0/24"),
        ({"ip": "10.77.0.2"}, "not the PC's 10.77.0.1 nor DUT a's 10.77.0.2"),
        ({"mac": "02:00:00:00:00:02"}, "both DUTs have MAC 02:00:00:00:00:02"),
        ({"extra": "  - name: c\n    kind: virtual\n    thresholds: virtual-20m\n    partner: b\n"
                   "    network: {dut_ip: 10.77.0.4, dut_mac: '02:00:00:00:00:04'}\n"},
         "it is already in a pair or behind a DUT"),
    ],
)  # fmt: skip
def test_a_bad_pair_gets_one_message_naming_it(tmp_path: Path, kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_bench(bench(tmp_path, **kwargs))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_partner_is_for_a_dut_that_ends_the_traffic(tmp_path: Path) -> None:
    path = bench(tmp_path)
    in_path = "    partner: b\n    role: in_path\n    peer: {ip: 10.77.0.9}\n    firmware: {config: bridge}\n"
    path.write_text(path.read_text().replace("    partner: b\n", in_path))
    with pytest.raises(ConfigError, match=r"partner: \(a second DUT on this DUT's link\) is for a DUT that ends"):
        load_bench(path)


def boards(tmp_path: Path, a: dict, b: dict) -> Path:
    """Two preflashed boards, the first naming the second as its partner, with `a` and `b` merged in."""
    base = {"kind": "preflashed", "console": {"port": "/dev/ttyACM0"}, "thresholds": "pair-20m",
            "link": {"rate_mbit": 100, "shaping": False}}  # fmt: skip
    first = base | {"name": "a", "partner": "b", "network": {"pc_ip": "10.9.0.1", "dut_ip": "10.9.0.2"}} | a
    second = base | {
        "name": "b",
        "network": {"pc_ip": "10.9.0.1", "dut_ip": "10.9.0.3", "dut_mac": "02:00:00:00:00:03"},
    }
    path = tmp_path / "boards.yaml"
    path.write_text(yaml.safe_dump({"duts": [first, second | b]}))
    return path


def test_two_boards_on_one_link_load(tmp_path: Path) -> None:
    a, b = load_bench(boards(tmp_path, {}, {"console": {"port": "/dev/ttyACM1"}})).duts
    assert a.partner == "b" and not a.local and not b.local
    assert bench_facts(a, PROFILES["quick"], b).partner == "b"


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ({}, {"kind": "virtual", "console": {"port": "pty"}, "link": {"rate_mbit": 100, "shaping": True}},
         "a DUT of the virtual bench and a board cannot share a link (kind 'preflashed' with kind 'virtual')"),
        ({}, {"network": {"pc_ip": "10.9.0.9", "dut_ip": "10.9.0.3", "dut_mac": "02:00:00:00:00:03"}},
         "two boards on one link share the PC's bench NIC: give both the same network.pc_ip, pc_netns and "
         "prefix_len (DUT a: 10.9.0.1/24 in the root namespace, DUT b: 10.9.0.9/24 in the root namespace)"),
        ({}, {"link": {"rate_mbit": 10, "shaping": False}},
         "give both the same link.rate_mbit (DUT a 100, DUT b 10 Mbit/s)"),
    ],
)  # fmt: skip
def test_a_bad_pair_of_boards_gets_one_message_naming_it(tmp_path: Path, a: dict, b: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_bench(boards(tmp_path, a, b))
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_the_pair_runs_the_two_endpoint_families_and_skips_the_rest_saying_why() -> None:
    a, _ = load_bench(BENCH).duts
    facts = bench_facts(a, PROFILES["quick"])
    assert facts.partner == "host-b"
    cases = collect(facts)
    ran = {c.case.family.name for c in cases if c.skip is None}
    skipped = {c.case.family.name: c.skip for c in cases if c.skip is not None}
    assert ran and ran <= PAIR_FAMILIES
    assert {
        "baseline",
        "packet-length sweep",
        "loss-free UDP capacity search",
        "ping latency",
        "bidirectional",
        "flood ping",
        "latency under load",
        "stress: bursty multi-stream UDP",
    } <= ran
    keys = {k for c in cases if c.case.family.name == "ping latency" for k in c.case.family.record_keys(c.case, facts)}
    assert keys == {("latency", "partner_to_dut"), ("latency", "dut_to_partner")}
    floods = {c.case.id for c in cases if c.case.family.name == "flood ping"}
    assert floods and all("partner_to_dut" in f or "dut_to_partner" in f for f in floods), floods
    for family in ("robustness (hostile and malformed traffic)", "TCP window sweep, PC-side -w"):
        assert skipped[family] == pair_skip("host-b")


def _record(case: str) -> CaseRecord:
    return CaseRecord("baseline", case, "host-a", "Mbit/s", [18.9], 18.9, 18.9, 18.9, 0.0, 18.99, 99.5)


def test_each_record_names_the_partner_and_the_way_its_traffic_went(tmp_path: Path) -> None:
    rec = Recorder(tmp_path, None, "quick")
    rec.second, rec.second_key = {"name": "host-b", "version": "v1"}, "dut_partner"
    tx, rx = _record("tcp-dut_tx"), _record("udp-dut_rx")
    rec.record(tx, 0.0, 1.0)
    rec.record(rx, 1.0, 2.0)
    assert tx.extra["dut_partner"] == {"name": "host-b", "version": "v1"}
    assert tx.extra["flow"] == "host-a -> host-b" and rx.extra["flow"] == "host-b -> host-a"


WIFI_PAIR = Path("bench") / "wifi-pair.yaml"


def _wifi_pair(tmp_path: Path, edit: dict[str, dict[str, object] | None]) -> Path:
    """bench/wifi-pair.yaml with `edit` applied to its DUTs' wifi: sections ({dut index: changes},
    None: no wifi: at all)."""
    data = yaml.safe_load(WIFI_PAIR.read_text())
    for index, change in edit.items():
        dut = data["duts"][int(index)]
        if change is None:
            dut.pop("wifi")
        else:
            dut["wifi"] = {k: v for k, v in {**dut["wifi"], **change}.items() if v is not None}
    path = tmp_path / "wifi-pair.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_project_bench_of_a_wifi_pair_loads() -> None:
    ap, station = load_bench(WIFI_PAIR).duts
    assert ap.partner == station.name and ap.wifi.mode == "softap" and station.wifi.mode == "station"
    assert station.wifi.ap == "partner" and station.wifi.ssid == ap.wifi.ssid


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"0": {"mode": "station"}, "1": {"mode": "softap", "ap": None}},
         "the DUT that names the partner is the SoftAP (wifi.mode: softap) and the partner its station"),
        ({"1": {"ssid": "other"}}, "the station's wifi.ssid 'other' is not its SoftAP's 'hil-pair'"),
        ({"1": {"ap": None}}, "give it wifi.ap: partner"),
        ({"1": None}, "a Wi-Fi pair has wifi: on both DUTs"),
        ({"0": {"ap": "partner"}}, "ap: names a station's access point; a SoftAP's section has none"),
    ],
)  # fmt: skip
def test_a_bad_wifi_pair_gets_one_message_naming_it(tmp_path: Path, edit: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_bench(_wifi_pair(tmp_path, edit))
    assert message in str(err.value), err.value


@pytest.mark.parametrize(
    ("wifi", "message"),
    [
        ({"mode": "softap", "ssid": "x"}, "wifi.mode softap is the access point of a Wi-Fi pair: name its station"),
        ({"ap": "partner", "ssid": "x"}, "wifi.ap partner needs a pair with a SoftAP"),
    ],
)
def test_a_softap_or_a_partner_station_outside_a_pair_is_refused(tmp_path: Path, wifi: dict, message: str) -> None:
    data = yaml.safe_load(Path("bench/virtual-wifi.yaml").read_text())
    data["duts"][0]["wifi"] = wifi
    path = tmp_path / "lone.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_bench(path)
    assert message in str(err.value), err.value


STOCK_PAIR = Path("bench") / "wifi-pair-espressif.yaml"


def test_the_stock_wifi_pair_loads_and_runs_what_the_example_can() -> None:
    """ESP-IDF's iperf example on both DUTs (bench/wifi-pair-espressif.yaml): the SoftAP at the
    example's fixed address; the families that need its missing `ping`, both directions at once
    or the stream service are skipped naming the example."""
    a, b = load_bench(STOCK_PAIR).duts
    assert a.personality_name == b.personality_name == "espressif-v4" and a.network.dut_ip == "192.168.4.1"
    cases = collect(bench_facts(a, PROFILES["quick"]))
    ran = {c.case.family.name for c in cases if c.skip is None}
    assert "baseline" in ran and "stress: bursty multi-stream UDP" not in ran


@pytest.mark.parametrize(
    ("index", "change", "message"),
    [
        (0, {"network": {"dut_ip": "192.168.4.7"}},
         "ESP-IDF's iperf example runs its SoftAP at 192.168.4.1/24 (the default AP netif, which its `ap` cannot "
         "change): set network.dut_ip 192.168.4.1 and prefix_len 24 (got 192.168.4.7/24)"),
        (0, {"personality": "espressif-iperf-cmd"},
         "a stock Wi-Fi pair on the virtual link needs personality: espressif-v4"),
        (1, {"personality": "espressif-iperf-cmd"},
         "a stock Wi-Fi pair on the virtual link needs personality: espressif-v4"),
    ],
)  # fmt: skip
def test_a_stock_wifi_pair_the_example_cannot_be_gets_one_message(
    tmp_path: Path, index: int, change: dict[str, object], message: str
) -> None:
    # (`index`, not `dut`: pytest-embedded takes a test parameter named `dut` for its DUT)
    data = yaml.safe_load(STOCK_PAIR.read_text())
    section = data["duts"][index]
    for key, value in change.items():
        section[key] = {**section[key], **value} if isinstance(value, dict) else value
    path = tmp_path / "stock-pair.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_bench(path)
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)
