"""What the UDP cases offer, as shares of what the link carries: the rates the sweep families and
the bidirectional family send at, and the floors check's expected value of each case
(hil.scenarios.floors) beside them."""

from __future__ import annotations

BASELINE_UDP_LEN = 1470  # iperf 2's default datagram (seed 000's)
BASELINE_UDP_OF_LINK = 0.90  # iperf 2's 1 Mbit/s UDP default gave seed 000 its 1.07 Mbit/s "UDP RX"
UDP_OFFER_OF_THEORY = 0.90  # UDP sweeps offer 90 % of the theoretical goodput of the point's length
BIDIR_UDP_OF_THEORY = 0.90  # both directions at once: each offers 90 % of the UDP theory
