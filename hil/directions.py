"""The matrix's directions and their names.

The traffic's roles are always the DUT's view: `dut_tx` flows towards the PC, `dut_rx` from it.
A DUT that ends the traffic keeps those names. A DUT in the path neither sends nor receives: there
the same directions are named from the thesis's view, `downlink` (PC -> peer, through the DUT)
and `uplink` (peer -> PC), in case ids, threshold keys, titles and charts.
"""

from __future__ import annotations

NAMES_IN_PATH = {"dut_rx": "downlink", "dut_tx": "uplink"}
SAYS_IN_PATH = {"dut_rx": "PC -> peer", "dut_tx": "peer -> PC"}


def direction_name(direction: str, in_path: bool) -> str:
    """`dut_tx` / `dut_rx`, or for a DUT in the path `uplink` / `downlink`."""
    if direction not in NAMES_IN_PATH:
        raise ValueError(f"unknown direction {direction!r} (dut_tx or dut_rx)")
    return NAMES_IN_PATH[direction] if in_path else direction


def direction_says(direction: str, in_path: bool, pair: tuple[str, str] | None = None) -> str:
    """What the direction means, for titles: `PC -> peer`, or `DUT -> PC` for an endpoint DUT; DUT
    to DUT (`pair`: the DUT and its partner) the two names, `host-a -> host-b` for `dut_tx`."""
    if pair is not None:
        return f"{pair[0]} -> {pair[1]}" if direction == "dut_tx" else f"{pair[1]} -> {pair[0]}"
    if in_path:
        return SAYS_IN_PATH[direction]
    return "DUT -> PC" if direction == "dut_tx" else "PC -> DUT"
