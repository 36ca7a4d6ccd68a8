"""Errors the suite reports as one clear line (never a traceback wall)."""


class BenchError(RuntimeError):
    """The bench (namespaces, links, tools, processes) could not be set up or used."""


class DutError(RuntimeError):
    """The device under test misbehaved: crashed, reset, fell silent or answered garbage."""


class ConsoleTimeout(DutError):
    """The DUT did not finish a console command in time."""
