"""Console dialects: the firmwares a DUT's console may speak (the project's `hil-fw`, Espressif's
iperf example, Zephyr's zperf), what each can do, their output parsers and their drivers. Each
dialect's module registers its driver (hil.console.dialects.registry)."""
