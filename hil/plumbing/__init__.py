"""The bench PC's plumbing: network namespaces and links, processes, pseudo-terminals, the
programs that stand in for a DUT on the PC (host firmware, QEMU)."""
