from pathlib import Path

import pytest

from hil.config.errors import ConfigError
from hil.config.thresholds import load_thresholds, profile_path
from hil.console.dialects.registry import dialect_info
from hil.dut.bench_file import DEFAULT_BENCH_FILE, load_bench
from hil.dut.kinds import kinds
from hil.scenarios.catalog import with_family_defaults
from hil.scenarios.contract import BenchFacts, collect, record_keys
from hil.scenarios.profiles import PROFILES

pytestmark = pytest.mark.selftest

GOOD_DUT = "  - name: d\n    kind: virtual\n    thresholds: virtual-100m\n"


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "f.yaml"
    p.write_text(text)
    return p


def test_default_bench_and_profile_load():
    bench = load_bench(DEFAULT_BENCH_FILE)
    dut = bench.duts[0]
    assert dut.kind == "virtual" and dut.link.rate_mbit == 100 and dut.link.shaping
    profile = load_thresholds(profile_path(dut.thresholds))
    for case in ("tcp-dut_tx", "tcp-dut_rx", "udp-dut_tx", "udp-dut_rx"):  # a floor on each, by rate or share
        limits = profile.limits("baseline", case)
        assert limits.min_mbps or limits.min_efficiency_pct


ESP = "duts:\n  - name: d\n    kind: esp32\n    console: {port: /dev/ttyUSB0}\n    link: {shaping: false}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("duts: []\n", "duts: List should have at least 1 item"),
        ("duts:\n" + GOOD_DUT + "    link: {rate_mbit: 0}\n", "duts[0].link.rate_mbit: Input should be greater than 0"),
        ("duts:\n" + GOOD_DUT + "    colour: red\n", "duts[0].colour: Extra inputs are not permitted"),
        ("duts:\n" + GOOD_DUT + "    network: {dut_ip: 10.1.2.3}\n", "dut_ip 10.1.2.3 is not in the PC's subnet"),
        ("duts:\n" + GOOD_DUT + "    network: {pc_ip: 10.77.0.300}\n", "duts[0].network.pc_ip: not an IPv4 address"),
        ("duts:\n" + GOOD_DUT + "    network: {dut_mac: '03:00:00:00:00:01'}\n", "not a unicast MAC address"),
        (
            "duts:\n  - name: d\n    kind: toaster\n    thresholds: x\n",
            f"duts[0].kind: unknown kind 'toaster' (one of {', '.join(repr(k) for k in kinds())})",
        ),
        ("duts:\n  - name: d\n    kind: esp32\n    link: {shaping: false}\n    thresholds: x\n", "needs console.port"),
        (ESP + "    thresholds: x\n", "kind 'esp32' needs wifi: the access point's ssid and psk_env"),
        (
            ESP + "    wifi: {ssid: ap, psk_env: 'hunter2 secret'}\n    thresholds: x\n",
            "not an environment variable name",
        ),
        (
            ESP + "    wifi: {ssid: ap}\n    esp_idf: {configs: [a, a]}\n    thresholds: x\n",
            "configs lists a configuration twice",
        ),
        (
            ESP + "    wifi: {ssid: ap}\n    esp_idf: {target: esp8266}\n    thresholds: x\n",
            "duts[0].esp_idf.target: Input should be",
        ),
        (ESP + "    wifi: {ssid: ap}\n    flasher: pyocd\n    thresholds: x\n", "(use esptool)"),
        ("duts:\n" + GOOD_DUT + "    esp_idf: {target: esp32}\n", "duts[0].esp_idf: Extra inputs are not permitted"),
        (
            "duts:\n  - name: d\n    kind: qemu\n    wifi: {ssid: ap}\n    thresholds: x\n",
            "duts[0].wifi: Extra inputs are not permitted",  # a kind's section has only what the kind uses
        ),
        ("duts:\n  - name: d\n    thresholds: x\n", "duts[0].kind: Field required (one of"),
        ("duts:\n" + GOOD_DUT + "    probe: {target: x}\n", "duts[0].probe: Extra inputs are not permitted"),
        ("duts:\n" + GOOD_DUT + "    flasher: pyocd\n", "flasher 'pyocd' does not fit kind 'virtual' (use process)"),
        ("duts:\n  - name: d\n    kind: qemu\n    flasher: openocd\n    thresholds: x\n", "(use qemu)"),
        ("duts:\n  - name: d\n    kind: same70\n    thresholds: x\n", "needs console.port: the board's serial"),
        (
            "duts:\n  - name: d\n    kind: same70\n    console: {port: /dev/ttyACM0}\n    thresholds: x\n",
            "real board on a real link: set link.shaping false",
        ),
        ("duts:\n  - name: d\n    kind: qemu\n    console: {port: /dev/ttyS0}\n    thresholds: x\n", "must be 'pty'"),
        ("duts:\n" + GOOD_DUT + GOOD_DUT, "duplicate DUT names: d"),
        ("pc: {tcp_congestion: 'BBR v2'}\nduts:\n" + GOOD_DUT, "pc.tcp_congestion: String should match pattern"),
        ("pc: {iperf2: /usr/bin/iperf}\nduts:\n" + GOOD_DUT, "pc.iperf2: Extra inputs are not permitted"),
        ("duts: [\n", "not valid YAML at line"),
        ("- just a list\n", "expected a mapping with a `duts` list"),
        ("secrets: [{name: wifi, env: LAB_PSK}]\nduts:\n" + GOOD_DUT, "secrets: is gone: the Wi-Fi passphrase comes"),
        ("duts:\n" + GOOD_DUT + "    role: in_path\n", "role in_path needs a `peer:` section"),
        ("duts:\n" + GOOD_DUT + "    peer: {ip: 10.77.0.3}\n", "a `peer:` is for role in_path"),
        ("duts:\n" + GOOD_DUT + "    role: router\n", "duts[0].role: Input should be 'endpoint' or 'in_path'"),
        (
            "duts:\n" + GOOD_DUT + "    role: in_path\n    peer: {ip: 10.9.0.3}\n",
            "peer.ip 10.9.0.3 is not in the PC's subnet 10.77.0.0/24",
        ),
        ("duts:\n" + GOOD_DUT + "    role: in_path\n    peer: {ip: 10.77.0.2}\n", "already the PC's or the DUT's"),
        (
            "duts:\n  - name: d\n    kind: qemu\n    role: in_path\n    peer: {}\n    thresholds: x\n",
            "kind 'qemu' cannot be put in the path (role in_path: kinds black_box, cabled_black_box, virtual)",
        ),
        (
            "duts:\n" + GOOD_DUT + "    role: in_path\n    peer: {}\n    link: {loss_pct: 1}\n",
            "link.loss_pct is not yet injected in the path",
        ),
        (
            "duts:\n  - name: d\n    kind: black_box\n    peer: {}\n    thresholds: x\n",
            "a black_box DUT needs `setup` (a command) and/or `program`",
        ),
        (
            "duts:\n  - name: d\n    kind: black_box\n    setup: 'true'\n    thresholds: x\n",
            "role in_path needs a `peer:` section",
        ),
        (
            "duts:\n  - name: d\n    kind: black_box\n    role: endpoint\n    setup: 'true'\n    thresholds: x\n",
            "duts[0].role: Input should be 'in_path'",
        ),
        (  # the virtual bench's SSH peer: the bench's own keys, a management link of its own
            "duts:\n" + GOOD_DUT + "    role: in_path\n    peer: {ssh: {host: 169.254.77.2, identity_file: /k}}\n",
            "the bench makes the run's own client and host keys; drop identity_file and known_hosts",
        ),
        (
            "duts:\n" + GOOD_DUT + "    role: in_path\n    peer: {ssh: {host: 10.77.0.9}}\n",
            "peer.ssh.host 10.77.0.9 is in the traffic's subnet 10.77.0.0/24",
        ),
        (
            "duts:\n" + GOOD_DUT + "    role: in_path\n    peer: {ssh: {host: 169.254.77.3}}\n",
            "peer.ssh.host 169.254.77.3 is the network or broadcast address of 169.254.77.0/30",
        ),
        (
            "duts:\n" + GOOD_DUT + "    role: in_path\n    peer: {ssh: {host: hub.lab}}\n",
            "give the IPv4 address the peer takes on its management link",
        ),
        (
            "duts:\n" + GOOD_DUT + "    role: in_path\n    peer: {ssh: {host: 'a b'}}\n",
            "not a host name or IPv4 address: 'a b'",
        ),
        (
            "duts:\n" + GOOD_DUT + "    role: in_path\n    peer: {ssh: {host: 169.254.77.2, user: 'root; rm'}}\n",
            "duts[0].peer.ssh.user: String should match pattern",
        ),
    ],
)
def test_bench_errors_name_file_key_and_problem(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        load_bench(path)
    assert str(exc.value).startswith(f"{path}: ") and message in str(exc.value)
    assert "\n" not in str(exc.value)
    assert "hunter2" not in str(exc.value)  # a PSK written where its variable's name belongs is not repeated


def test_the_bridge_bench_puts_the_dut_in_the_path():
    dut = load_bench(DEFAULT_BENCH_FILE.parent / "bridge.yaml").duts[0]
    assert dut.in_path and dut.peer is not None and dut.peer.ip == "10.77.0.3" and dut.peer.rate_mbit is None
    assert dut.peer.ssh is not None and dut.peer.ssh.host == "169.254.77.2"  # the Hub, over SSH
    profile = load_thresholds(profile_path(dut.thresholds))
    # each way at least 94 % of the theoretical goodput, as the black box's and the endpoint DUT's:
    # one 3-s test through the shaped queue measured 97.97 % on an idle host, the endpoint DUT 95.6 %
    for case in ("tcp-uplink", "tcp-downlink"):
        assert profile.limits("baseline", case).min_efficiency_pct == 94


def test_the_black_box_bench_has_no_console_and_forwards_between_its_ports():
    dut = load_bench(DEFAULT_BENCH_FILE.parent / "black-box.yaml").duts[0]
    assert dut.kind == "black_box" and not dut.HAS_CONSOLE and dut.in_path and dut.IN_PATH_MODE == "black_box"
    assert '"$1"' in (dut.setup or "") and '"$2"' in (dut.setup or "")
    load_thresholds(profile_path(dut.thresholds))


def test_missing_bench_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_bench(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("profile: p\nscenarios: {baseline: {tcp-dut_tx: {}}}\n", "no limit given"),
        ("profile: p\nscenarios: {baseline: {tcp-dut_tx: {min_mbps: -1}}}\n", "greater than or equal to 0"),
        ("profile: p\nscenarios: {baseline: {tcp-dut_tx: {max_loss_pct: 101}}}\n", "less than or equal to 100"),
        ("profile: p\nscenarios: {baseline: {tcp-dut_tx: {minimum: 5}}}\n", "Extra inputs are not permitted"),
        ("scenarios: {}\n", "profile: Field required"),
        ("profile: p\nscenarios: {}\ntrends: {window_dut: {min_gain_pct: 10}}\n", "max_drop_pct: Field required"),
        ("profile: p\nscenarios: {}\ntrends: {window_dut: {min_gain_pct: 5, max_drop_pct: 100}}\n", "less than 100"),
    ],
)
def test_threshold_errors(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as exc:
        load_thresholds(path)
    assert str(exc.value).startswith(f"{path}: ")


def test_a_case_without_threshold_is_an_error_not_a_pass(tmp_path):
    profile = load_thresholds(write(tmp_path, "profile: p\nscenarios: {baseline: {tcp-dut_tx: {min_mbps: 1}}}\n"))
    with pytest.raises(ConfigError, match="no limits for baseline/udp-dut_rx"):
        profile.limits("baseline", "udp-dut_rx")
    with pytest.raises(ConfigError, match="no `trends: window_dut:` entry"):
        profile.trend("window_dut")


def matrix_cases(profile_name: str, in_path: bool, dialect: str | None = None) -> list[tuple[str, str]]:
    """Every (scenario, case) the matrix records under a run profile (from the scenario registry:
    hil.scenarios.contract), for a DUT in the path or one that ends the traffic in `dialect`;
    the cases such a bench skips left out."""
    bench = BenchFacts(PROFILES[profile_name], in_path=in_path, dialect=dialect_info(dialect) if dialect else None)
    return [key for found in collect(bench) if found.skip is None for key in record_keys(found.case, bench)]


def in_path_cases(profile_name: str) -> list[tuple[str, str]]:
    """What a threshold profile for a DUT in the path must answer."""
    cases = matrix_cases(profile_name, in_path=True)
    assert ("reconnect", "pc_side") in cases and ("stress-stress", "all") in cases  # the registry's, not typed here
    return cases


@pytest.mark.parametrize("thresholds", ["bridge-virtual", "black-box-virtual", "same70-bridge"])
@pytest.mark.parametrize("profile_name", ["quick", "full"])
def test_every_in_path_case_has_its_limits(thresholds, profile_name):
    """A threshold profile for a DUT in the path answers every case of the in-path matrix with
    limits or a reason (a missing entry is an error at the case, which a board run would find late);
    a family's default limits count (hil.scenarios.catalog.with_family_defaults), as in a run."""
    profile = with_family_defaults(load_thresholds(profile_path(thresholds)))
    for scenario, case in in_path_cases(profile_name):
        limits = profile.limits(scenario, case)  # raises on a case without limits
        assert limits.bounds() or limits.no_criterion, f"{thresholds}: {scenario}/{case}"


def test_the_same70_bridge_profile_is_marked_as_the_thesis_figures():
    text = profile_path("same70-bridge").read_text()
    assert "THESE ARE THE THESIS'S FIGURES, NOT MEASURED HERE" in text
    profile = load_thresholds(profile_path("same70-bridge"))
    assert profile.limits("baseline", "tcp-uplink").min_mbps == 84  # 90 % of the thesis's 93.6
    assert profile.limits("capacity", "downlink-l64").min_mbps == 3.7  # 90 % of the thesis's 4.1


@pytest.mark.parametrize(
    ("peer", "message"),
    [
        (
            "{ip: 10.77.0.3}",
            "a real bench's peer needs peer.netns (the namespace holding the PC's second NIC) or peer.ssh",
        ),
        ("{ip: 10.77.0.3, netns: nic2, ssh: {host: hub}}", "one of `netns` (a second NIC of the PC), `ssh`"),
        ("{ip: 10.77.0.3, netns: nic2, rate_mbit: 50}", "peer.rate_mbit shapes the virtual bench's peer link"),
    ],
)
def test_a_cabled_black_box_needs_a_real_peer(tmp_path, peer, message):
    text = (
        "duts:\n  - name: box\n    kind: cabled_black_box\n    link: {shaping: false}\n"
        f"    peer: {peer}\n    thresholds: x\n"
    )
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_bench(write(tmp_path, text))


def test_a_cabled_black_box_on_a_two_nic_bench_loads():
    text = (
        "duts:\n  - name: box\n    kind: cabled_black_box\n    reset: 'relay-cli cycle 3'\n"
        "    network: {pc_ip: 10.77.0.1, pc_netns: nic1}\n    link: {shaping: false}\n"
        "    peer: {ip: 10.77.0.3, netns: nic2}\n    thresholds: x\n"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        dut = load_bench(write(Path(d), text)).duts[0]
    assert dut.in_path and not dut.local and not dut.HAS_CONSOLE and dut.peer.netns == "nic2"


@pytest.mark.parametrize(
    ("dut", "message"),
    [
        (
            "kind: qemu\n    console: {dialect: zephyr-zperf}",
            "console.dialect 'zephyr-zperf' does not fit kind 'qemu' (it speaks hil-fw)",
        ),
        ("kind: virtual\n    console: {dialect: zperf}", "console.dialect: Input should be 'hil-fw'"),
        (
            "kind: virtual\n    console: {dialect: zephyr-zperf}\n    personality: espressif-v4",
            "personality 'espressif-v4' does not speak console.dialect 'zephyr-zperf' (it has zephyr-zperf)",
        ),
        ("kind: virtual\n    personality: zephyr-zperf", "the project's firmware has no personality"),
        (
            "kind: same70\n    console: {port: /dev/ttyACM0, dialect: zephyr-zperf}\n    link: {shaping: false}",
            "console.dialect zephyr-zperf: give firmware.image, the zperf sample's build/zephyr/zephyr.elf",
        ),
        (
            "kind: esp32\n    console: {port: /dev/ttyUSB0, dialect: espressif-iperf}\n    link: {shaping: false}",
            "esp_idf.project_dir is the example's directory",
        ),
        (
            "kind: esp32\n    console: {port: /dev/ttyUSB0, dialect: zephyr-zperf}\n    link: {shaping: false}",
            "does not fit kind 'esp32' (it speaks hil-fw or espressif-iperf)",
        ),
    ],
)
def test_a_dialect_must_fit_the_kind(tmp_path, dut, message):
    text = f"duts:\n  - name: d\n    {dut}\n    thresholds: x\n"
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        load_bench(write(tmp_path, text))


@pytest.mark.parametrize(
    ("bench", "dialect", "personality"),
    [
        ("virtual-espressif", "espressif-iperf", "espressif-iperf-cmd"),
        ("virtual-zperf", "zephyr-zperf", "zephyr-zperf"),
        ("esp32-iperf-example", "espressif-iperf", None),
        ("same70-zperf", "zephyr-zperf", None),
    ],
)
def test_the_stock_bench_files_load(bench, dialect, personality):
    dut = load_bench(Path("bench") / f"{bench}.yaml").duts[0]
    assert dut.console.dialect == dialect and dut.stock_firmware
    assert getattr(dut, "personality_name", None) == personality
    assert dut.ladders() == ((), ())  # a stock image has no TCP_WND / TCP_MSS builds


def endpoint_cases(profile_name: str, dialect: str) -> list[tuple[str, str]]:
    """Every (scenario, case) a DUT that ends the traffic records under a run profile and a dialect
    (its not-applicable cases left out)."""
    return matrix_cases(profile_name, in_path=False, dialect=dialect)


@pytest.mark.parametrize(
    ("thresholds", "dialect"), [("esp32-iperf-example", "espressif-iperf"), ("same70-zperf", "zephyr-zperf")]
)
@pytest.mark.parametrize("profile_name", ["quick", "full"])
def test_every_applicable_stock_case_has_its_limits(thresholds, dialect, profile_name):
    profile = with_family_defaults(load_thresholds(profile_path(thresholds)))
    for scenario, case in endpoint_cases(profile_name, dialect):
        assert profile.limits(scenario, case).bounds(), f"{thresholds}: {scenario}/{case}"


def test_the_stock_profiles_say_their_figures_are_not_measured_here():
    esp32 = profile_path("esp32-iperf-example").read_text()
    assert "THESE ARE PUBLISHED FIGURES, NOT MEASURED HERE" in esp32
    profile = load_thresholds(profile_path("esp32-iperf-example"))
    assert profile.limits("baseline", "tcp-dut_rx").min_mbps == 45  # ESP-IDF's CI gate TCP_RX
    assert "THESE ARE THE THESIS'S FIGURES, NOT MEASURED HERE" in profile_path("same70-zperf").read_text()
    assert load_thresholds(profile_path("same70-zperf")).limits("baseline", "tcp-dut_rx").min_mbps == 82  # 90 % of 91.4
