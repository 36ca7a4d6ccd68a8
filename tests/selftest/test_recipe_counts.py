"""The recipes' counts (docs/architecture.md): a console dialect is its own files - its driver and
its parser, and what else only it uses (its Wi-Fi join) - at most 3 files of hil/, all in
hil/console/dialects/ (its transcripts are in tests/support/transcripts/); a DUT kind is its own
module, its name in at most 2 files of hil/. Both registries find their members by themselves
(hil.console.dialects.registry, hil.dut.kinds): a list of dialects or kinds typed a second time
somewhere in hil/ is what these counts catch.

A file counts for a dialect or a kind when it has the name as a string of its own (`"zephyr-zperf"`,
not a message that mentions it) or imports one of its modules. A dialect's modules are its
driver's module and the modules of hil/console/dialects/ that only this driver reaches through
its imports (its parser, its Wi-Fi join), not those another dialect's driver reaches too (the
shared base, the registry)."""

from __future__ import annotations

import ast
import functools

import pytest

from hil.console.dialects.registry import dialect_driver, dialects
from hil.dut.kinds import kinds
from hil.paths import PROJECT_ROOT

pytestmark = pytest.mark.selftest

MAX_DIALECT_FILES = 3
MAX_KIND_FILES = 2
DIALECTS_PACKAGE = "hil.console.dialects"
# the virtual kind names the stock dialects the host firmware's console personalities emulate
# (firmware/host/src/*_personality.c): the firmware's list, which its C code cannot read from here
EMULATORS = {"hil/dut/virtual.py"}


def hil_sources() -> dict[str, str]:
    return {p.relative_to(PROJECT_ROOT).as_posix(): p.read_text() for p in sorted((PROJECT_ROOT / "hil").rglob("*.py"))}


def module_name(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def imported(tree: ast.Module, module: str, is_package: bool) -> set[str]:
    """The modules a module imports (`from a import b` counts as a and a.b: b may be a module)."""
    out: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative to the module's package
                parent = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            out |= {base} | {f"{base}.{a.name}" for a in node.names}
    return out


@functools.cache
def read_module(path: str, text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The strings a module has of its own, and the modules it imports."""
    tree = ast.parse(text, path)
    strings = frozenset(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return strings, frozenset(imported(tree, module_name(path), path.endswith("__init__.py")))


class Sources:
    """hil/'s modules: the strings each has of its own, and the modules each imports."""

    def __init__(self, sources: dict[str, str]) -> None:
        read = {path: read_module(path, text) for path, text in sources.items()}
        self.strings = {path: strings for path, (strings, _) in read.items()}
        self.imports = {path: imports for path, (_, imports) in read.items()}
        self.paths = {module_name(p): p for p in sources}

    def reached(self, module: str, within: str) -> set[str]:
        """The modules of package `within` that `module` reaches through its imports, itself included."""
        seen, todo = {module}, [module]
        while todo:
            for name in self.imports[self.paths[todo.pop()]]:
                if name.startswith(within + ".") and name in self.paths and name not in seen:
                    seen.add(name)
                    todo.append(name)
        return seen

    def naming(self, name: str, modules: set[str]) -> set[str]:
        """The files that have `name` as a string of their own or import one of `modules`."""
        return {p for p in self.strings if name in self.strings[p] or self.imports[p] & modules}


def own_modules(src: Sources, drivers: dict[str, str]) -> dict[str, set[str]]:
    """Each dialect's modules: its driver's, and those only its driver reaches."""
    reach = {name: src.reached(module, DIALECTS_PACKAGE) for name, module in drivers.items()}
    return {name: r - set().union(*(o for n, o in reach.items() if n != name)) for name, r in reach.items()}


def dialect_files(src: Sources, drivers: dict[str, str]) -> dict[str, set[str]]:
    return {
        name: ({src.paths[m] for m in own} | src.naming(name, own)) - EMULATORS
        for name, own in own_modules(src, drivers).items()
    }


def kind_files(src: Sources, modules: dict[str, str]) -> dict[str, set[str]]:
    return {name: src.naming(name, {module}) | {src.paths[module]} for name, module in modules.items()}


def registered_dialects() -> dict[str, str]:
    """Each registered dialect's driver module."""
    return {name: dialect_driver(name).__module__ for name in dialects()}


def registered_kinds() -> dict[str, str]:
    """Each registered kind's module."""
    return {name: kind.config.__module__ for name, kind in kinds().items()}


def over(found: dict[str, set[str]], limit: int) -> dict[str, list[str]]:
    return {name: sorted(files) for name, files in found.items() if len(files) > limit}


def test_a_dialect_is_at_most_three_files_of_its_own() -> None:
    found = dialect_files(Sources(hil_sources()), registered_dialects())
    assert set(found) >= {"hil-fw", "espressif-iperf", "zephyr-zperf"}, found
    assert not over(found, MAX_DIALECT_FILES), over(found, MAX_DIALECT_FILES)
    for name, files in found.items():  # its driver and its parser live with the dialects
        assert all(f.startswith("hil/console/dialects/") for f in files), (name, sorted(files))


def test_a_kind_is_named_in_at_most_two_files() -> None:
    found = kind_files(Sources(hil_sources()), registered_kinds())
    assert set(found) >= {"virtual", "qemu", "same70", "esp32", "black_box", "cabled_black_box", "preflashed"}
    assert not over(found, MAX_KIND_FILES), over(found, MAX_KIND_FILES)


def _more_files(sources: dict[str, str], line: str, files: int) -> dict[str, str]:
    """hil/'s sources with `files` new modules of the one line `line`."""
    return sources | {f"hil/recipe_probe_{i}.py": line + "\n" for i in range(files)}


@pytest.mark.parametrize("dialect", sorted(registered_dialects()))
def test_the_dialect_count_fails_when_one_file_too_many_names_it(dialect: str) -> None:
    """The count is not vacuous: the dialect's name typed again, or one of its modules imported,
    until it is in one file more than the limit, fails it."""
    sources, drivers = hil_sources(), registered_dialects()
    src = Sources(sources)
    missing = MAX_DIALECT_FILES + 1 - len(dialect_files(src, drivers)[dialect])
    grown = dialect_files(Sources(_more_files(sources, f"KNOWN = ({dialect!r},)", missing)), drivers)
    assert over(grown, MAX_DIALECT_FILES) == {dialect: sorted(grown[dialect])}
    for module in own_modules(src, drivers)[dialect]:
        grown = dialect_files(Sources(_more_files(sources, f"import {module}", missing)), drivers)
        assert over(grown, MAX_DIALECT_FILES) == {dialect: sorted(grown[dialect])}, module


@pytest.mark.parametrize("kind", sorted(registered_kinds()))
def test_the_kind_count_fails_when_one_file_too_many_names_it(kind: str) -> None:
    sources, modules = hil_sources(), registered_kinds()
    missing = MAX_KIND_FILES + 1 - len(kind_files(Sources(sources), modules)[kind])
    for line in (f"KNOWN = ({kind!r},)", f"import {modules[kind]}"):
        grown = kind_files(Sources(_more_files(sources, line, missing)), modules)
        assert over(grown, MAX_KIND_FILES) == {kind: sorted(grown[kind])}, line


def test_the_registries_name_none_of_their_members() -> None:
    """Neither registry is a list: its members register themselves where they are defined."""
    src = Sources(hil_sources())
    members = set(registered_dialects()) | set(registered_kinds())
    for registry in ("hil/console/dialects/registry.py", "hil/dut/kinds.py"):
        assert not src.strings[registry] & members, registry
        assert not {m for m in src.imports[registry] if m in set(registered_dialects().values())}, registry
        assert not {m for m in src.imports[registry] if m in set(registered_kinds().values())}, registry
