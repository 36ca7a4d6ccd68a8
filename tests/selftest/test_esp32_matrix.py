"""The ESP32 matrix as pytest lists it from the example bench file: every measurement once per
build configuration of `esp_idf.configs`, with `<target>-<config>` ids; the ladder tests, which
flash their own builds, once. Listing needs neither a board, root nor the PSK."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hil.dut.bench_file import load_bench
from hil.paths import PROJECT_ROOT

pytestmark = pytest.mark.selftest

BENCH = PROJECT_ROOT / "bench" / "esp32.yaml"
TEST = "tests/hil/test_scenarios.py::test_scenario"


def collect(*extra: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "HIL_WIFI_PSK"}
    argv = [sys.executable, "-m", "pytest", "tests/hil", "--bench", str(BENCH), "--collect-only", "-q", *extra]
    proc = subprocess.run(argv, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line for line in proc.stdout.splitlines() if "::" in line]


def test_esp32_matrix_lists_each_test_per_config() -> None:
    dut = load_bench(BENCH).duts[0]
    configs = dut.idf.configs
    assert len(configs) >= 2
    ids = collect()
    for config in configs:
        tag = f"{dut.idf.target}-{config}"
        assert f"{TEST}[baseline/tcp-dut_tx-{tag}]" in ids
        assert f"{TEST}[length_udp/dut_rx-l500-{tag}]" in ids
        assert any("capacity/" in i and tag in i for i in ids)
        assert f"{TEST}[latency-{tag}]" in ids
    # the cases that flash their own builds: the ladders and the configuration studies
    own = ("window_dut", "mss_dut", "stack", "sndbuf", "pools")
    ladder = [i for i in ids if any(f"[{s}/" in i or f"[{s}]" in i for s in own)]
    assert f"{TEST}[window_dut/dut_rx-wnd2]" in ids
    assert f"{TEST}[mss_dut/dut_tx-mss536]" in ids
    assert f"{TEST}[stack/dut_rx-stock]" in ids and f"{TEST}[stack/dut_rx-tuned]" in ids
    assert f"{TEST}[sndbuf/dut_tx-sndbuf16]" in ids
    assert f"{TEST}[pools]" in ids  # ESP-IDF's lwIP has no PBUF_POOL_SIZE: one case, skipped saying so
    per_config = [i for i in ids if "[" in i and any(f"{dut.idf.target}-{c}" in i for c in configs)]
    assert len(per_config) == len(ids) - len(ladder)
    each = len(per_config) // len(configs)
    print(f"{len(ids)} tests: {each} per configuration x {configs} + {len(ladder)} ladder steps")
