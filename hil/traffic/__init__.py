"""Traffic generators that run inside the PC namespace."""
