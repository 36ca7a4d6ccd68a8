"""One-line errors for configuration files: file, key and problem."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

ModelT = TypeVar("ModelT", bound=BaseModel)


class ConfigError(ValueError):
    """A bench or threshold file is unusable; the message names the file, the key and the problem."""


def _key(loc: tuple[int | str, ...], hide_tags: set[str] | None = None) -> str:
    out = ""
    hidden = hide_tags or set()
    for i, part in enumerate(loc):
        if part in hidden and i > 0 and isinstance(loc[i - 1], int):
            continue  # the tag of a discriminated union's member: says nothing the key does not

        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def from_validation(path: Path, exc: ValidationError, hide_tags: set[str] | None = None) -> ConfigError:
    problems = []
    for err in exc.errors():
        msg = err["msg"].removeprefix("Value error, ")
        loc = tuple(err["loc"])
        if err["type"] in ("union_tag_invalid", "union_tag_not_found"):  # a discriminated union's tag
            ctx = err.get("ctx", {})
            tag = str(ctx.get("discriminator", "tag")).strip("'")
            loc += (tag,)
            msg = f"Field required (one of {ctx.get('expected_tags')})"
            if err["type"] == "union_tag_invalid":
                msg = f"unknown {tag} {ctx.get('tag')!r} (one of {ctx.get('expected_tags')})"
        problems.append(f"{_key(loc, hide_tags)}: {msg}")
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return ConfigError(f"{path}: {problems[0]}{more}")


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader that refuses a key given twice in one mapping (plain YAML keeps the last
    value without a word: a bench file's second `pc_ip:` would silently win)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[object, object]:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor` merges, it is no key of its own
                continue
            key = self.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
                seen[key] = line
            except TypeError:  # an unhashable key (a list): the constructor below says what is wrong
                continue
            if first is not None:
                where = f"line {line}" if first == line else f"lines {first} and {line}"
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} given twice ({where}): remove one (YAML would silently keep the last)",
                    key_node.start_mark,
                )  # fmt: skip
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: Path) -> object:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not a UTF-8 text file (byte {exc.object[exc.start]:#04x} at offset {exc.start})"
        ) from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of thousands of digits, nesting too deep
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{path}: not usable YAML: {first}") from None


def load_model(path: Path, model: type[ModelT], expected: str, hide_tags: set[str] | None = None) -> ModelT:
    """Reads a YAML file into a validated model; every problem is one ConfigError line."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected {expected}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation(path, exc, hide_tags) from None
