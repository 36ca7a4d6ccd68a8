"""Bench and threshold files: validated models and loaders with one-line errors."""
