"""ESP-IDF build directories: which one a (target, config) pair means and what is in it.

The lookup is the one of ESP-IDF's own CI conftest: ``build_<target>_<config>``, then
``build_<target>``, ``build_<config>``, ``build``. The directory is parsed by pytest-embedded-idf's
IdfApp (flasher_args.json, config/sdkconfig.json), then checked against what was asked: the
target it was built for and the configuration name the firmware reports (CONFIG_HIL_FW_VARIANT),
so a fallback directory of another configuration is refused rather than measured, and checked
for what pytest-embedded-idf's IdfSerial.flash needs to write it (hil.dut.flashers).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from pytest_embedded_idf.app import IdfApp

from hil.config.errors import ConfigError

_CONFIG_LINE = re.compile(r"^(CONFIG_[A-Z0-9_]+)=(.*)$")


def build_dir_candidates(target: str, config: str) -> list[str]:
    """The build directory names tried for (target, config), most specific first."""
    return [f"build_{target}_{config}", f"build_{target}", f"build_{config}", "build"]


def resolve_build_dir(project_dir: Path, target: str, config: str) -> Path:
    for name in build_dir_candidates(target, config):
        path = project_dir / name
        if path.is_dir():
            return path
    raise ConfigError(
        f"no ESP-IDF build for target {target} config {config!r} in {project_dir} "
        f"(looked for {', '.join(build_dir_candidates(target, config))}); build it with "
        f"firmware/esp32/tools/build.sh --target {target} {config}"
    )


@dataclass(frozen=True)
class FlashFile:
    offset: int
    path: Path


@dataclass(frozen=True)
class IdfBuild:
    """What the suite needs of one ESP-IDF build directory."""

    path: Path
    target: str
    variant: str
    elf: Path | None
    flash_files: tuple[FlashFile, ...]
    sdkconfig: dict[str, object]


def _fail(path: Path, problem: str) -> ConfigError:
    return ConfigError(f"ESP-IDF build {path}: {problem}")


def load_build(path: Path, target: str, config: str, project_build: bool = True) -> IdfBuild:
    """Parses a build directory and checks it is the build of (target, config); `project_build`
    False: a stock firmware's build (Espressif's iperf example), which names no configuration."""
    flasher_args = path / "flasher_args.json"
    if not flasher_args.is_file():
        raise _fail(path, "has no flasher_args.json (not an ESP-IDF build directory, or the build did not finish)")
    try:
        app = IdfApp(app_path=str(path.parent), build_dir=str(path))
    except json.JSONDecodeError as exc:
        raise _fail(path, f"a JSON file is malformed: {exc}") from None
    except (KeyError, ValueError, TypeError) as exc:
        raise _fail(path, f"flasher_args.json lacks or mangles {exc}") from None
    sdkconfig = app.sdkconfig
    if not sdkconfig:
        raise _fail(path, "has no config/sdkconfig.json: cannot tell the target and configuration it was built for")
    built_target = str(sdkconfig.get("IDF_TARGET", ""))
    if built_target != target:
        raise _fail(path, f"was built for target {built_target or '(none)'}, not {target}")
    variant = str(sdkconfig.get("HIL_FW_VARIANT", "")) if project_build else config
    if variant != config:
        raise _fail(path, f"holds configuration {variant or '(none: not this project)'!r}, not {config!r}")
    files = tuple(FlashFile(f.offset, Path(f.file_path)) for f in app.flash_files)
    if not files:
        raise _fail(path, "flasher_args.json lists no flash files")
    missing = [str(f.path) for f in files if not f.path.is_file()]
    if missing:
        raise _fail(path, f"flash files missing: {', '.join(missing)}")
    if any(f.encrypted for f in app.flash_files):
        raise _fail(path, "asks for flash encryption, which the suite does not do")
    for key in ("extra_esptool_args", "write_flash_args"):  # what IdfSerial.flash reads besides the files
        if not isinstance(app.flash_args.get(key), dict if key.startswith("extra") else list):
            raise _fail(path, f"flasher_args.json lacks {key!r}")
    extra = app.flash_args["extra_esptool_args"]
    if extra.get("chip") not in (None, target):
        raise _fail(path, f"flasher_args.json is for chip {extra.get('chip')}, not {target}")
    elf = Path(app.elf_file) if app.elf_file else None
    return IdfBuild(path, target, variant, elf, files, sdkconfig)


def read_sdkconfig_file(path: Path) -> dict[str, str]:
    """`CONFIG_X=value` lines of an sdkconfig.defaults / sdkconfig.ci.* file (comments skipped);
    a line of another form is an error naming the file and line."""
    values: dict[str, str] = {}
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _CONFIG_LINE.match(line)
        if m is None:
            raise ConfigError(f"{path}:{n}: not a CONFIG_NAME=value line: {line!r}")
        values[m.group(1)] = m.group(2).strip('"')
    return values


def project_configs(project_dir: Path) -> dict[str, dict[str, str]]:
    """Every build configuration of the project (sdkconfig.ci.<name>) with its effective
    settings: sdkconfig.defaults overlaid by the configuration's file."""
    base = read_sdkconfig_file(project_dir / "sdkconfig.defaults")
    return {
        f.name.removeprefix("sdkconfig.ci."): {**base, **read_sdkconfig_file(f)}
        for f in sorted(project_dir.glob("sdkconfig.ci.*"))
    }
