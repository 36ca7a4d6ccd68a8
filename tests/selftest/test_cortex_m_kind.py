"""DUT kind `cortex-m` (hil/dut/cortex_m.py): a Cortex-M board flashed with pyocd by its part's
name from the bench file's image. Its example bench file loads; a missing or unknown target, a
missing or wrong image is one line naming the key or the file; and the adapter runs the pyocd
command of the bench file's target, probe and image - pyocd itself asked which targets it knows
(`pyocd list --targets`), only the flashing, which needs a board, replaced."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import pytest

from hil.config.errors import ConfigError
from hil.dut.bench_file import load_bench
from hil.dut.cortex_m import CortexMDutConfig
from hil.dut.flashers import pyocd_targets
from hil.dut.images import ARM_IMAGE, check_image_file
from hil.dut.kinds import kinds
from hil.errors import BenchError
from hil.paths import PROJECT_ROOT

pytestmark = pytest.mark.selftest

EXAMPLE = PROJECT_ROOT / "bench" / "cortex-m.yaml"
TARGET = "stm32f429xi"  # the example's: a part pyocd has built in (no pack to install)


def arm_elf() -> bytes:
    """An ELF header of a 32-bit little-endian ARM executable (what the format check reads)."""
    ident = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
    return ident + struct.pack("<HHI", 2, 40, 1) + bytes(52 - 24)


def intel_hex(records: list[tuple[int, int, bytes]]) -> str:
    lines = []
    for address, kind, data in [*records, (0, 1, b"")]:
        body = bytes([len(data)]) + address.to_bytes(2, "big") + bytes([kind]) + data
        lines.append(f":{body.hex().upper()}{(-sum(body)) & 0xFF:02X}")
    return "\n".join(lines) + "\n"


VECTORS = struct.pack("<II", 0x20030000, 0x080001C1)  # initial SP in SRAM, a Thumb reset handler


def bench(tmp_path: Path, dut: str) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(
        "duts:\n  - name: board\n    kind: cortex-m\n    link: {shaping: false}\n    thresholds: same70-100m\n"
        + "".join(f"    {line}\n" for line in dut.splitlines())
    )
    return path


GOOD = f"firmware: {{image: /img/fw.elf}}\nconsole: {{port: /dev/ttyACM0}}\nprobe: {{target: {TARGET}}}"


def test_the_kind_registers_itself_and_the_example_bench_file_loads() -> None:
    assert kinds()["cortex-m"].config is CortexMDutConfig  # found by the registry: listed nowhere
    dut = load_bench(EXAMPLE).duts[0]
    assert isinstance(dut, CortexMDutConfig) and dut.kind == "cortex-m"
    assert dut.probe.target == TARGET and dut.flasher_name == "pyocd" and not dut.local
    assert dut.IMAGE_FORMAT == ARM_IMAGE and dut.firmware.image == Path("/path/to/your/firmware.elf")
    assert dut.console.port == "/dev/ttyACM0" and dut.console.dialect == "hil-fw"
    assert dut.dialects() == ("hil-fw", "zephyr-zperf") and dut.ladders() == ((), ())
    assert (PROJECT_ROOT / "thresholds" / f"{dut.thresholds}.yaml").is_file()


def test_pyocd_is_asked_which_targets_it_knows() -> None:
    """The targets the section accepts are those `pyocd list --targets` prints on this PC."""
    pyocd = shutil.which("pyocd", path=str(Path(sys.executable).parent)) or shutil.which("pyocd")
    assert pyocd is not None
    listed = subprocess.run([pyocd, "list", "--targets"], capture_output=True, text=True, timeout=60, check=True)
    names = {line.split()[0] for line in listed.stdout.splitlines()[2:] if line.strip()}
    assert TARGET in names and "nrf52840" in names
    assert names == set(pyocd_targets())


@pytest.mark.parametrize(
    ("dut", "message"),
    [
        ("firmware: {image: /img/fw.elf}\nconsole: {port: /dev/ttyACM0}", "duts[0].probe: Field required"),
        (GOOD.replace(f"target: {TARGET}", "unique_id: '0670FF'"), "duts[0].probe.target: Field required"),
        (
            GOOD.replace(TARGET, "stm32f999zz"),
            "duts[0].probe.target: pyocd knows no target 'stm32f999zz' on this PC (`pyocd list --targets`)",
        ),
        (GOOD.replace(TARGET, "stm32 f4"), "duts[0].probe.target: String should match pattern"),
        (
            GOOD.replace("firmware: {image: /img/fw.elf}\n", ""),
            "kind 'cortex-m' is flashed from firmware.image: give the image (.elf, .hex or .bin)",
        ),
        (
            GOOD.replace("firmware: {image: /img/fw.elf}\n", "").replace("}\nprobe", ", dialect: zephyr-zperf}\nprobe"),
            "give the image (.elf, .hex or .bin), e.g. the zperf sample's build/zephyr/zephyr.elf",
        ),
        (GOOD + "\nflasher: openocd", "flasher 'openocd' does not fit kind 'cortex-m' (use pyocd)"),
        (
            GOOD.replace("}\nprobe", ", dialect: espressif-iperf}\nprobe"),
            "console.dialect 'espressif-iperf' does not fit kind 'cortex-m' (it speaks hil-fw or zephyr-zperf)",
        ),
        (GOOD.replace(f"target: {TARGET}", f"target: {TARGET}, openocd_board: x.cfg"), "flashed with pyocd"),
        (GOOD.replace("console: {port: /dev/ttyACM0}\n", ""), "kind 'cortex-m' needs console.port"),
        (GOOD + "\nesp_idf: {target: esp32}", "duts[0].esp_idf: Extra inputs are not permitted"),
    ],
)
def test_a_bad_section_is_one_line_naming_the_key(tmp_path: Path, dut: str, message: str) -> None:
    path = bench(tmp_path, dut)
    with pytest.raises(ConfigError) as exc:
        load_bench(path)
    assert str(exc.value).startswith(f"{path}: ") and message in str(exc.value), str(exc.value)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("fw.elf", None, "does not exist"),
        ("fw.img", arm_elf(), "pyocd flashes .elf, .axf, .hex or .bin files"),
        ("fw.elf", b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HH", 2, 62) + bytes(40), "not a 32-bit ARM image"),
        ("fw.elf", b"MZ not an elf at all", "is not an ELF file"),
        ("fw.hex", intel_hex([(0, 0, VECTORS)]).replace(":08", ":09", 1), "line 1 is no record"),
        ("fw.hex", intel_hex([(0, 0, VECTORS)]).rsplit(":", 1)[0], "it has no end-of-file record"),
        ("fw.hex", b"\xff\xfe binary", "not an Intel HEX file (not ASCII text)"),
        ("fw.bin", b"\x00" * 64, "does not begin with a vector table"),
        ("fw.bin", arm_elf(), "is an ELF file: name it .elf"),
        ("fw.bin", b"\x00\x00", "no vector table"),
    ],
)
def test_a_bad_image_is_one_line_naming_the_file(tmp_path: Path, name: str, content: bytes | str | None, message: str):
    image = tmp_path / name
    if isinstance(content, str):
        image.write_text(content)
    elif content is not None:
        image.write_bytes(content)
    with pytest.raises(ConfigError) as exc:
        check_image_file(image, ARM_IMAGE, "DUT board")
    assert str(exc.value).startswith(f"DUT board: firmware image {image}") and message in str(exc.value), exc.value


@dataclass
class _Probe:
    unique_id: str
    description: str = "CMSIS-DAP (a stand-in)"


@pytest.fixture
def pyocd_flash(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """pyocd's API as it is, except what needs a board: the probe search finds one probe, a
    session on it and its file programmer record what they were asked."""
    import pyocd.core.session
    import pyocd.flash.file_programmer
    from pyocd.core.helpers import ConnectHelper

    flashed: list[dict[str, object]] = []
    asked: dict[str, object] = {}

    def probes(blocking: bool = True, unique_id: str | None = None, print_wait_message: bool = True) -> list[_Probe]:
        asked.update(blocking=blocking, unique_id=unique_id)
        return [_Probe("0670FF3")] if unique_id in (None, "0670FF3") else []

    class Session:
        def __init__(self, probe: _Probe, target_override: str, options: dict[str, object]) -> None:
            self.probe, self.target_name = probe, target_override
            self.target = self

        def __enter__(self) -> Self:
            return self

        def __exit__(self, *exc: object) -> None:
            flashed[-1]["closed"] = True

        def reset(self) -> None:
            flashed[-1]["reset"] = True

    class FileProgrammer:
        def __init__(self, session: Session, progress: object = None) -> None:
            self.session = session

        def program(self, path: str) -> None:
            flashed.append({"probe": self.session.probe.unique_id, "target": self.session.target_name,
                            "image": path, **asked})  # fmt: skip

    monkeypatch.setattr(ConnectHelper, "get_all_connected_probes", staticmethod(probes))
    monkeypatch.setattr(pyocd.core.session, "Session", Session)
    monkeypatch.setattr(pyocd.flash.file_programmer, "FileProgrammer", FileProgrammer)
    return flashed


@pytest.mark.parametrize("image", ["fw.elf", "fw.hex", "fw.bin"])
def test_the_adapter_flashes_the_image_with_pyocd_by_target_name(tmp_path: Path, pyocd_flash, image: str) -> None:
    path = tmp_path / image
    if image.endswith(".hex"):
        path.write_text(intel_hex([(0, 0, VECTORS)]))
    else:
        path.write_bytes(arm_elf() if image.endswith(".elf") else VECTORS + bytes(56))
    port = tmp_path / "ttyACM0"  # a console port that exists
    port.touch()
    probe = f"probe: {{target: {TARGET}, unique_id: 0670FF3, timeout_s: 30}}"
    dut = load_bench(bench(tmp_path, f"firmware: {{image: {path}}}\nconsole: {{port: {port}}}\n{probe}")).duts[0]
    adapter = kinds()["cortex-m"].make(dut, None, tmp_path / "dut")  # type: ignore[arg-type]
    adapter.flash()
    [done] = pyocd_flash
    # through pyocd's API: the named probe searched without waiting, a session with the part as its
    # target, the image programmed, the target reset to run it, the session closed
    assert done == {"probe": "0670FF3", "target": TARGET, "image": str(path), "blocking": False,
                    "unique_id": "0670FF3", "reset": True, "closed": True}  # fmt: skip
    assert adapter.flash_count == 1 and adapter.current_config == "default" and adapter.console_port == str(port)
    assert "programmed and reset" in (tmp_path / "dut" / "flash.log").read_text()


def test_a_probe_not_attached_is_one_line_listing_those_that_are(tmp_path: Path, pyocd_flash) -> None:
    path = tmp_path / "fw.elf"
    path.write_bytes(arm_elf())
    port = tmp_path / "ttyACM0"
    port.touch()
    probe = f"probe: {{target: {TARGET}, unique_id: 1234ABC, timeout_s: 30}}"
    dut = load_bench(bench(tmp_path, f"firmware: {{image: {path}}}\nconsole: {{port: {port}}}\n{probe}")).duts[0]
    with pytest.raises(BenchError) as exc:
        kinds()["cortex-m"].make(dut, None, tmp_path / "dut").flash()  # type: ignore[arg-type]
    assert str(exc.value) == (
        "flasher pyocd: debug probe 1234ABC not attached (attached: 0670FF3 (CMSIS-DAP (a stand-in)))"
    )
    assert pyocd_flash == []


def test_the_adapter_stops_at_an_image_gone_since_the_file_was_read(tmp_path: Path, pyocd_flash) -> None:
    port = tmp_path / "ttyACM0"
    port.touch()
    dut = load_bench(bench(tmp_path, GOOD.replace("/dev/ttyACM0", str(port)))).duts[0]
    with pytest.raises(ConfigError, match=r"DUT board: firmware image /img/fw.elf does not exist"):
        kinds()["cortex-m"].make(dut, None, tmp_path / "dut").flash()  # type: ignore[arg-type]
    assert pyocd_flash == []
