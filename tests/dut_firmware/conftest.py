"""The project's own test benches for the firmware's tests: a virtual link with the host firmware
started on it (tests/support/host_dut.py); the HIL suite's runs do not load them."""

from tests.support.host_dut import start_host_dut, virtual_link  # noqa: F401  (fixtures)
