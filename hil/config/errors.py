"""One-line errors for configuration files: file, key and problem."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

ModelT = TypeVar("ModelT", bound=BaseModel)


class ConfigError(ValueError):
    """A bench or threshold file is unusable; the message names the file, the key and the problem."""


def _key(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def from_validation(path: Path, exc: ValidationError) -> ConfigError:
    problems = []
    for err in exc.errors():
        msg = err["msg"].removeprefix("Value error, ")
        problems.append(f"{_key(err['loc'])}: {msg}")
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return ConfigError(f"{path}: {problems[0]}{more}")


def read_yaml(path: Path) -> object:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None


def load_model(path: Path, model: type[ModelT], expected: str) -> ModelT:
    """Reads a YAML file into a validated model; every problem is one ConfigError line."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected {expected}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation(path, exc) from None
