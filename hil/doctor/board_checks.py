"""What a real board needs before it can be flashed and measured: its probe and target pack, its
build (or ESP-IDF to make it), its serial port and what answers there, the Wi-Fi secret and the
labgrid place that shares it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from hil.config.errors import ConfigError
from hil.config.sections import DutBase, WifiConfig
from hil.doctor import serial_port
from hil.doctor.finding import Finding, ok, problem
from hil.dut.esp_idf_build import resolve_build_dir
from hil.dut.flashers import pyocd_knows, pyocd_probes
from hil.dut.images import check_image_file
from hil.errors import BenchError
from hil.traffic.tester_ceilings import FILE_FORMAT


def probe(dut: DutBase) -> list[Finding]:
    """The debug probe attached (pyocd's API lists CMSIS-DAP, ST-Link, J-Link), and for pyocd the
    target's pack installed for the user the suite runs as (root)."""
    cfg = getattr(dut, "probe", None)
    if cfg is None:
        return []
    found = []
    if dut.flasher_name == "openocd" and shutil.which("openocd") is None:
        found.append(problem("flasher", "openocd is not on PATH", "apt-get install openocd (./suite setup does)"))
    if dut.flasher_name != "openocd":
        try:
            knows = pyocd_knows(cfg.target)
        except ValueError as exc:
            knows, why = False, str(exc)
        else:
            why = f"pyocd does not know target {cfg.target} (its CMSIS pack is not installed for {_user()})"
        found.append(
            ok("target pack", f"pyocd knows {cfg.target}")
            if knows
            else problem(
                "target pack", why, f"as the user the suite runs as: .venv/bin/pyocd pack install {cfg.target}"
            )
        )
    try:
        probes = pyocd_probes(cfg.unique_id)
    except Exception as exc:  # a USB stack error is the bench's answer, one line
        probes, error = [], f"pyocd could not list probes: {exc}"
    else:
        error = ""
    if probes:
        found.append(ok("debug probe", ", ".join(probes)))
    else:
        which = f"probe {cfg.unique_id}" if cfg.unique_id else "no debug probe"
        others = pyocd_probes() if cfg.unique_id and not error else []
        found.append(
            problem(
                "debug probe",
                error or f"{which} attached" + (f" (attached: {', '.join(others)})" if others else ""),
                "connect the board's debug USB port (SAME70 Xplained: the EDBG port), or correct probe.unique_id",
            )
        )
    return found


def _user() -> str:
    return "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"


def idf_found() -> str | None:
    """Where ESP-IDF's idf.py is: on PATH (after `. export.sh`), or under $IDF_PATH."""
    on_path = shutil.which("idf.py")
    if on_path:
        return on_path
    idf_path = os.environ.get("IDF_PATH")
    if idf_path and (Path(idf_path) / "tools" / "idf.py").is_file():
        return str(Path(idf_path) / "tools" / "idf.py")
    return None


def firmware(dut: DutBase) -> list[Finding]:
    """The image the run flashes is there, or can be made here."""
    idf = getattr(dut, "idf", None)
    if idf is not None and not getattr(dut, "stock_firmware", False):
        missing = []
        for config in dut.build_configs:
            try:
                resolve_build_dir(idf.project_dir, idf.target, config)
            except ConfigError:
                missing.append(config)
        if not missing:
            return [ok("firmware", f"ESP-IDF builds of {', '.join(dut.build_configs)} in {idf.project_dir}")]
        tool = idf_found()
        if tool:
            return [ok("firmware", f"{', '.join(missing)} not built yet: ./suite ci builds them with {tool}")]
        return [
            problem(
                "firmware",
                f"no ESP-IDF build of {', '.join(missing)} in {idf.project_dir}, and no ESP-IDF here",
                "install ESP-IDF and `. export.sh` (docs/first-board-esp32.md), or build in Espressif's "
                "container: firmware/esp32/tools/build.sh --docker",
            )
        ]
    image = dut.firmware.image
    if image is not None and dut.IMAGE_FORMAT is not None:
        try:
            check_image_file(image, dut.IMAGE_FORMAT, "firmware.image")
        except (ConfigError, BenchError) as exc:
            return [problem("firmware", str(exc), "build the image, or point firmware.image at it")]
        return [ok("firmware", str(image))]
    built = dut.prebuilt_image()
    if built is not None:
        if not built.is_file():
            return [problem("firmware", f"{built} is not built", "./suite setup builds the board images")]
        return [ok("firmware", str(built))]
    return []


def wifi_secret(wifi: WifiConfig | None, build_dirs: list[Path]) -> list[Finding]:
    """The PSK in the one variable the bench file names, valid, and in no build on this PC."""
    if wifi is None:
        return []
    if wifi.psk_env is None:
        return [ok("Wi-Fi secret", f"{wifi.ssid!r} is an open network (no psk_env)")]
    try:
        psk = wifi.psk()
    except ConfigError as exc:
        return [
            problem(
                "Wi-Fi secret",
                str(exc),
                f"export {wifi.psk_env}='...' in the shell that runs the suite "
                "(sudo: sudo -E, or sudo env " + wifi.psk_env + "=...)",
            )
        ]
    found = [ok("Wi-Fi secret", f"{wifi.psk_env} is set ({len(psk)} characters; never written anywhere)")]
    leaked = baked_into(psk.encode(), build_dirs)
    if leaked:
        found.append(
            problem(
                "secret in image",
                f"the PSK is in {len(leaked)} build file(s), e.g. {leaked[0]}",
                "delete those builds and build again: the firmware never takes the PSK at build time",
            )
        )
    return found


SCANNED = {".bin", ".elf", ".map", ".h", ".c", ".txt", ".json", ".cmake"}


def baked_into(secret: bytes, dirs: list[Path]) -> list[Path]:
    """The build files that hold the secret, as bytes or as the C initialiser of them."""
    forms = [secret, ",".join(f"0x{b:02x}" for b in secret).encode()]
    hits = []
    for top in dirs:
        for path in sorted(top.rglob("*")) if top.is_dir() else []:
            if path.suffix in SCANNED or path.name.startswith("sdkconfig"):
                try:
                    data = path.read_bytes()
                except OSError:
                    continue
                if any(form in data for form in forms):
                    hits.append(path)
    return hits


def tester(dut: DutBase) -> list[Finding]:
    """A two-NIC bench's frame tester calibrated (`./suite calibrate-tester`)."""
    if dut.tester is None:
        return []
    path = dut.tester.ceilings_path()
    again = "with the two NICs joined by a cable: ./suite calibrate-tester --bench FILE"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return [problem("tester", f"{path}: not calibrated yet", again)]
    except (OSError, ValueError) as exc:
        return [problem("tester", f"{path}: not a calibration file ({exc})", again)]
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
        return [problem("tester", f"{path}: not a calibration file of format {FILE_FORMAT}", again)]
    return [ok("tester", f"{path}: ceilings at {', '.join(sorted(data.get('ceilings', {}), key=int))} B")]


def console(dut: DutBase, flashes: bool) -> list[Finding]:
    """The port there and free, and what answers on it: the firmware's console, or (a board the run
    flashes first) the probe or the chip's ROM the run flashes it through."""
    port = dut.console.port
    found = [serial_port.present(port)]
    if found[0].problem:
        return found
    if "://" not in port:
        found.append(serial_port.not_held(port))
        if found[-1].problem:
            return found
    answered, said = serial_port.console_answers(dut, min(dut.console.boot_timeout_s, 5.0))
    if answered:
        return [*found, ok("console", f"{dut.console.dialect}: {said}")]
    if getattr(dut, "idf", None) is not None:  # an ESP chip: its ROM answers esptool
        rom, chip = serial_port.esp_rom_answers(port)
        if rom:
            return [*found, ok("console", f"no firmware console yet; the ROM answers: {chip} (the run flashes it)")]
        return [
            *found,
            problem(
                "console",
                f"neither the firmware ({said}) nor the chip's ROM ({chip}) answers on {port}",
                "right port? hold BOOT while pressing EN; a USB cable that carries data",
            ),
        ]
    if flashes:
        return [*found, ok("console", f"silent before flashing ({said}); the run flashes it through the probe")]
    return [
        *found,
        problem(
            "console",
            f"no answer in the {dut.console.dialect} dialect: {said}",
            f"check console.baud ({dut.console.baud}) and console.dialect, and that the board runs its firmware",
        ),
    ]
