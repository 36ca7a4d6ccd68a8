"""The DUT console: the protocol (one final line per command) and its drivers."""
