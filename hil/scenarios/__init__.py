"""Scenario building blocks: profiles, sweeps, the UDP capacity search, latency, charts."""
