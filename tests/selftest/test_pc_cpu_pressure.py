"""How contended the bench PC's CPUs were during a case (hil.plumbing.cpu_pressure, the kernel's
pressure stall information): read, windowed, and kept with every record as evidence."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hil.plumbing.cpu_plan import machine_cpus
from hil.plumbing.cpu_pressure import PRESSURE_FILE, CpuPressureMeter, read_some_total_us
from hil.results.recorder import Recorder, make_record
from hil.stats import summarize

pytestmark = [pytest.mark.selftest, pytest.mark.host_cpu]

SPIN = "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])}); exec('while True: pass')"
PSI = "some avg10=0.00 avg60=0.00 avg300=0.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"


def test_the_some_line_total_is_read_and_a_kernel_without_psi_gives_none(tmp_path: Path) -> None:
    f = tmp_path / "cpu"
    f.write_text(PSI.format(5770332086))
    assert read_some_total_us(f) == 5770332086
    f.write_text("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    assert read_some_total_us(f) is None
    assert read_some_total_us(tmp_path / "missing") is None
    assert not CpuPressureMeter(tmp_path / "missing").available


def test_a_window_gets_the_share_of_it_in_which_a_task_waited(tmp_path: Path) -> None:
    f = tmp_path / "cpu"
    f.write_text(PSI.format(1_000_000))
    meter = CpuPressureMeter(f)
    meter._sampler.sample()
    start = time.time()
    time.sleep(0.4)
    f.write_text(PSI.format(1_000_000 + 200_000))  # 0.2 s stalled in about 0.4 s
    stop = time.time()
    share = meter.window(start, stop)
    assert share is not None and 40 <= share.some_pct <= 55
    assert share.as_fields() == {"some_pct": round(share.some_pct, 1)}


@pytest.mark.skipif(not PRESSURE_FILE.exists(), reason="this kernel has no pressure stall information")
def test_two_spinners_on_every_cpu_show_as_pressure() -> None:
    """Two busy loops pinned to each CPU: on every CPU one of them always waits. (The kernel
    weighs each CPU's stall time by how busy that CPU was: spinners on one CPU of two while a
    busy loop holds the other show as 50 %.)"""
    meter = CpuPressureMeter()
    meter.start()
    cpus = machine_cpus()  # every CPU of the machine, not the bench CPUs this run was placed on
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN, str(cpu)]) for cpu in cpus for _ in range(2)]
    try:
        time.sleep(0.5)  # all running
        start = time.time()
        time.sleep(1.5)
        share = meter.window(start, time.time())
    finally:
        for s in spinners:
            s.kill()
            s.wait()
        meter.stop()
    assert share is not None and share.some_pct >= 80, share


def test_every_record_carries_the_pc_s_cpu_pressure(tmp_path: Path) -> None:
    f = tmp_path / "cpu"
    f.write_text(PSI.format(0))
    meter = CpuPressureMeter(f)
    recorder = Recorder(tmp_path, None)
    recorder.set_pc_cpu(meter.window)
    meter._sampler.sample()
    start = time.time()
    time.sleep(0.3)
    f.write_text(PSI.format(30_000))
    rec = make_record("baseline", "tcp-dut_tx", "host", summarize([94.5]), 94.93)
    recorder.record(rec, start, time.time())
    line = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[-1])
    assert 5 <= line["extra"]["pc_cpu"]["some_pct"] <= 12
    assert line["verdict"] == "recorded"  # evidence, not a verdict
