"""Library of the HIL network performance suite: virtual bench, DUT processes, console, traffic."""
