"""Top-level pytest configuration of the HIL suite."""

import signal

pytest_plugins = ["fixtures.options", "fixtures.host_bench", "fixtures.bench"]


def _sigterm_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


# A terminated run unwinds like Ctrl-C, so fixtures remove namespaces, taps and processes.
signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
