"""The sanitizer build of the host DUT under hostile input: random console lines and malformed
iperf headers. Any memory error or undefined behaviour aborts the program (ASan/UBSan with
-fno-sanitize-recover), so surviving, still answering and a clean log are the pass criteria.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from hil.paths import PROJECT_ROOT
from hil.tools.ping import ping_argv
from tests.support.host_dut import RunningHostDut

pytestmark = [pytest.mark.virtual_bench, pytest.mark.slow]

RANDOM_LINES = 10_000
CHECKPOINT_EVERY = 1_000  # lines; then running tests are stopped and the console must answer
MALFORMED_UDP = 1_000
MALFORMED_TCP = 1_000
SANITIZER_MARKERS = ("AddressSanitizer", "UndefinedBehaviorSanitizer", "runtime error:", "LeakSanitizer")

VOCABULARY = [
    "iperf", "ping", "stats", "version", "help", "-s", "-c", "-u", "-p", "-t", "-n", "-l", "-b", "-i", "-a",
    "--abort", "-f", "-S", "-B", "-P", "-V", "-W", "-x", "--udp", "--port=", "--len=", "reset", "10.77.0.1",
    "10.77.0.2", "255.255.255.255", "0.0.0.0", "1.2.3", "0", "1", "65535", "65536", "1472", "1473", "100m",
    "1G", "0.1", "0.0001", "-1", "4294967296", "99999999999999999999", "k", "restart",
]  # fmt: skip


def random_line(rng: random.Random) -> bytes:
    parts: list[bytes] = []
    for _ in range(rng.randrange(0, 12)):
        kind = rng.randrange(10)
        if kind == 0:
            parts.append(str(rng.getrandbits(rng.randrange(1, 64))).encode())
        elif kind == 1:
            parts.append(bytes(b for b in rng.randbytes(rng.randrange(1, 8)) if b not in (10, 13)))
        elif kind == 2 and rng.randrange(6) == 0:
            parts.append(b"A" * rng.randrange(0, 400))
        else:
            parts.append(rng.choice(VOCABULARY).encode())
    line = rng.choice([b" ", b"\t"]).join(parts)
    if line.strip().startswith(b"restart") and rng.randrange(20):
        line = b"version"  # a restart now and then, not one in every few hundred lines
    return line


def assert_healthy(dut: RunningHostDut) -> None:
    reply = dut.console.command("version", timeout_s=10)
    assert reply.final is not None and reply.final.kind == "RESULT"
    assert dut.process.alive(), f"DUT exited with {dut.process.exit_code()}: {dut.process.log_tail()}"
    log = dut.process.log_text()
    found = [m for m in SANITIZER_MARKERS if m in log]
    assert not found, f"sanitizer report in the DUT log: {dut.process.log_tail(20)}"
    pc = dut.topology.exec_prefix(dut.topology.pc_ns)
    ping = subprocess.run(ping_argv(pc, dut.topology.config.dut_ip, count=3),
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert ping.returncode == 0, f"DUT no longer answers ping: {(ping.stdout + ping.stderr)[-200:]}"


@pytest.fixture
def asan_dut(start_host_dut) -> RunningHostDut:
    return start_host_dut("asan")


def stop_tests(dut: RunningHostDut) -> None:
    dut.console.command("iperf -a", timeout_s=10, accept=lambda f: "action" in f.fields)
    dut.console.command("ping -a", timeout_s=10, accept=lambda f: "action" in f.fields)


def test_random_console_lines(asan_dut: RunningHostDut) -> None:
    rng = random.Random(20261122)
    console = asan_dut.console
    for i in range(RANDOM_LINES):
        console.write_raw(random_line(rng) + rng.choice([b"\r\n", b"\n", b"\r"]))
        console.poll_lines()
        if i % CHECKPOINT_EVERY == CHECKPOINT_EVERY - 1:
            console.drain(0.3)  # a random `restart` reboots the DUT: its banner is not a command's answer
            stop_tests(asan_dut)
            console.command("version", timeout_s=15)
    stop_tests(asan_dut)
    assert_healthy(asan_dut)
    answers = sum(1 for line in console.transcript if line.startswith(("RESULT ", "ERR ")))
    print(f"{RANDOM_LINES} random lines, {answers} final lines")
    assert answers >= RANDOM_LINES // 2, "most random lines must get an answer"


def helper(dut: RunningHostDut, *args: str) -> list[str]:
    topo = dut.topology
    return [*topo.exec_prefix(topo.pc_ns), sys.executable, "-m", "hil.traffic.malformed_iperf", *args]


def test_malformed_udp_headers(asan_dut: RunningHostDut) -> None:
    console = asan_dut.console
    chunk = 50
    for seed in range(MALFORMED_UDP // chunk):
        stop_tests(asan_dut)
        console.send("iperf -s -u")
        console.wait_text(r"UDP server listening", timeout_s=5)
        out = subprocess.run(helper(asan_dut, "udp", asan_dut.topology.config.dut_ip, "5001", str(chunk), str(seed)),
                             capture_output=True, text=True, check=False, cwd=PROJECT_ROOT, timeout=30)  # fmt: skip
        assert f"sent={chunk}" in out.stdout, out.stderr[-500:]
        console.poll_lines()
    stop_tests(asan_dut)
    assert_healthy(asan_dut)


def test_malformed_tcp_headers(asan_dut: RunningHostDut) -> None:
    console = asan_dut.console
    argv = helper(asan_dut, "tcp", asan_dut.topology.config.dut_ip, "5001", str(MALFORMED_TCP), "7")
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for n in range(1, MALFORMED_TCP + 1):
            console.send("iperf -s")
            console.wait_text(r"TCP server listening", timeout_s=5)
            proc.stdin.write("next\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == f"sent {n}"
            # the session ends when the helper closes; a reset or garbage must still end it cleanly
            reply = console.wait_final("iperf", timeout_s=10)
            assert reply.final is not None and reply.final.fields.get("role") == "server", reply.output
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert_healthy(asan_dut)
