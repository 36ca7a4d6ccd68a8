"""DUT adapters: how each kind of DUT is flashed, reset and reached."""
