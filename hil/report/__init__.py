"""The HTML report: its summary, its history, its offline check in headless Chromium."""
