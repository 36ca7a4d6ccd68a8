"""The robustness family's service states and the classes that aim at them, without a bench:
which class x state cases a bench gets (and why one is skipped), the frames aimed at a live
connection, the live connection read from captured frames, the replay command naming the state."""

from __future__ import annotations

import dataclasses

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether

from hil.console.dialects.registry import dialect_info
from hil.robustness.classes import CLASSES, Ends, systematic_frames
from hil.robustness.live import Live, parse_live
from hil.robustness.service_classes import PING_ID, unanswered
from hil.robustness.states import STATES, applies
from hil.scenarios.contract import BenchFacts
from hil.scenarios.families.robustness import Robustness, RobustnessPoint, _state_names
from hil.scenarios.profiles import QUICK

PC, DUT = "10.77.0.1", "10.77.0.2"
ENDS = Ends("02:11:22:33:44:55", PC, "02:00:00:00:00:02", DUT, dut_ip=DUT, dut_mac="02:00:00:00:00:02")
HIL_FW = dialect_info("hil-fw")


def test_an_endpoint_with_a_console_gets_every_class_in_every_state_of_its_services() -> None:
    cases = Robustness().cases(BenchFacts(QUICK, kind="virtual", dialect=HIL_FW))
    states = [n for n in STATES if n != "forwarding"]
    classes = [n for n in CLASSES if n != "fdb"]
    expected = [f"robustness/{c}" if s == "idle" else f"robustness/{c}@{s}" for c in classes for s in states]
    assert [c.id for c in cases] == expected
    assert not any(c.skip for c in cases)
    assert sum(c.point.last for c in cases) == 1 and cases[-1].point.last  # type: ignore[attr-defined]


def test_a_dut_in_the_path_gets_idle_and_forwarding_with_the_bridge_class() -> None:
    cases = Robustness().cases(BenchFacts(QUICK, kind="virtual", in_path=True, dialect=HIL_FW))
    assert {c.point.state for c in cases} == {"idle", "forwarding"}  # type: ignore[attr-defined]
    assert "robustness/fdb@forwarding" in [c.id for c in cases]


def test_a_state_named_where_it_cannot_be_set_up_is_skipped_saying_why() -> None:
    named = dataclasses.replace(QUICK, sweeps={"robustness_states": ("tcp_server",), "robustness_classes": ("fdb",)})
    in_path = Robustness().cases(BenchFacts(named, kind="virtual", in_path=True, dialect=HIL_FW))
    assert [c.id for c in in_path] == ["robustness/fdb@tcp_server"]
    assert in_path[0].skip and "needs the DUT's own services" in in_path[0].skip
    endpoint = Robustness().cases(BenchFacts(named, kind="virtual", dialect=HIL_FW))
    assert endpoint[0].skip and "no address table" in endpoint[0].skip
    assert applies(STATES["forwarding"], in_path=False, has_console=True) is not None
    assert applies(STATES["idle"], in_path=False, has_console=False) is None


def test_the_states_option_refuses_unknown_names() -> None:
    assert _state_names("idle, ping") == ("idle", "ping")
    for bad in ("", "idle,listening", ","):
        try:
            _state_names(bad)
        except ValueError as exc:
            assert "--robustness-states takes STATE or CLASS@STATE" in str(exc)
        else:
            raise AssertionError(f"{bad!r} was taken")


def test_the_case_key_names_the_state() -> None:
    assert RobustnessPoint("tcp", 10, 2000.0, None).key == "tcp"
    assert RobustnessPoint("tcp", 10, 2000.0, None, state="tcp_server").key == "tcp@tcp_server"


def test_the_exhaust_class_floods_the_service_port_from_addresses_nobody_answers() -> None:
    frames = systematic_frames(CLASSES["exhaust"], ENDS, 3)
    syns = [Ether(f.data) for f in frames if "SYN flood" in f.variant and "nobody" in f.variant]
    assert len(syns) == 64
    sources = {p[IP].src for p in syns}
    assert PC not in sources and DUT not in sources and all(s.startswith("10.77.0.") for s in sources)
    assert all(p[TCP].dport == 5001 and p[TCP].flags == "S" for p in syns)
    assert unanswered(ENDS, __import__("random").Random(1)) not in (PC, DUT, "10.77.0.255", "10.77.0.0")


def test_the_forged_class_aims_at_the_live_connection_inside_and_outside_its_window() -> None:
    live = Live("tcp", pc_port=41000, dut_port=5001, pc_next_seq=1000, dut_next_seq=5000, dut_window=2920)
    ends = dataclasses.replace(ENDS, live=live)
    segs = [Ether(f.data) for f in systematic_frames(CLASSES["forged"], ends, 3) if f.variant.startswith("segments")]
    assert segs and all(p[TCP].sport == 41000 and p[TCP].dport == 5001 for p in segs)
    resets = [p[TCP].seq for p in segs if p[TCP].flags == "R"]
    assert 1000 + 2920 // 2 in resets  # inside the window, not at its edge (RFC 5961: a challenge ACK)
    assert any(s > 1000 + 0x10000 for s in resets)  # outside it
    assert 1000 not in resets  # never the exact edge: that reset is a legitimate one


def test_the_forged_echo_replies_carry_the_dut_pings_id_and_each_its_fault() -> None:
    frames = systematic_frames(CLASSES["forged"], ENDS, 3)
    replies = [(f.variant, Ether(f.data)[ICMP]) for f in frames if f.variant.startswith("ICMP echo replies")]
    assert replies and all(p.type == 0 and p.id == PING_ID for _, p in replies)

    def checksum_ok(icmp: ICMP) -> bool:
        redone = ICMP(bytes(icmp))
        redone.chksum = None
        return int.from_bytes(bytes(redone)[2:4], "big") == icmp.chksum

    bad = [p for v, p in replies if "wrong checksum" in v]
    other = [p for v, p in replies if "another payload" in v]
    short = [p for v, p in replies if "8 bytes" in v]
    assert bad and not any(checksum_ok(p) for p in bad)  # the DUT must check the checksum to refuse these
    assert other and all(checksum_ok(p) for p in other)  # ... and the payload to refuse these
    assert short and all(len(bytes(p.payload)) == 8 for p in short)


def test_the_forged_reports_reach_the_live_udp_client_port_from_the_wrong_source() -> None:
    live = Live("udp", pc_port=5001, dut_port=49160)
    frames = systematic_frames(CLASSES["forged"], dataclasses.replace(ENDS, live=live), 3)
    reports = [Ether(f.data) for f in frames if f.variant.startswith("iperf UDP server reports")]
    assert reports and all(p[UDP].dport == 49160 for p in reports)
    assert all(p[UDP].sport != 5001 or p[IP].src != PC for p in reports)


def test_a_live_tcp_connection_is_read_from_captured_frames() -> None:
    to_dut = Ether() / IP(src=PC, dst=DUT) / TCP(sport=41000, dport=5001, flags="PA", seq=100, ack=7, window=500)
    to_dut = to_dut / (b"x" * 40)
    to_pc = Ether() / IP(src=DUT, dst=PC) / TCP(sport=5001, dport=41000, flags="A", seq=7, ack=140, window=2920)
    live = parse_live([bytes(to_dut), bytes(to_pc)], PC, DUT, "tcp")
    assert live == Live("tcp", 41000, 5001, pc_next_seq=140, dut_next_seq=7, dut_window=2920, pc_window=500)
    assert parse_live([bytes(to_dut)], "10.9.9.9", DUT, "tcp") is None


def test_class_at_state_entries_add_single_cases_to_the_states_named() -> None:
    named = dataclasses.replace(QUICK, sweeps={"robustness_states": ("idle", "exhaust@tcp_server", "forged@ping")})
    cases = Robustness().cases(BenchFacts(named, kind="virtual", dialect=HIL_FW))
    ids = [c.id for c in cases]
    assert ids == [f"robustness/{n}" for n in CLASSES if n != "fdb"] + ["robustness/exhaust@tcp_server",
                                                                         "robustness/forged@ping"]  # fmt: skip
    assert _state_names("exhaust@tcp_server") == ("exhaust@tcp_server",)
    for bad in ("nosuch@tcp_server", "exhaust@nosuch"):
        try:
            _state_names(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was taken")
