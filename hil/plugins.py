"""Plug-ins register themselves where they are defined (DUT kinds, console dialects, scenario
families: each registry's `register`); a registry finds them by importing every module of its
package once, on its first question, so no list of them is kept anywhere."""

from __future__ import annotations

import importlib
import pkgutil

_imported: set[str] = set()


def import_all(package: str) -> None:
    """Imports every module of `package` once, in name order (each registers what it defines). A
    module that asks its registry while it is itself imported imports the others first: it sees
    them all (a module being imported is already in sys.modules: nothing is imported twice)."""
    if package in _imported:
        return
    found = importlib.import_module(package)
    for module in sorted(m.name for m in pkgutil.iter_modules(found.__path__)):
        importlib.import_module(f"{package}.{module}")
    _imported.add(package)
