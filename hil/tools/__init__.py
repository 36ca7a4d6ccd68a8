"""The traffic and measurement tools the PC runs: iperf 2, iperf 3, ping, and their parsers."""
