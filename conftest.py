"""Top-level pytest configuration of the HIL suite."""

pytest_plugins = ["fixtures.host_bench"]
