"""`./suite doctor`: every check a bench needs before it measures anything, each one line with its
fix - the PC's rights and tools, the DUT's console, probe or ROM, the PC port's address and
route, the peer, the Wi-Fi secret, the builds, the tester's calibration, the labgrid place.
No traffic is sent; a virtual DUT is brought up and asked what it is, as a run would."""
