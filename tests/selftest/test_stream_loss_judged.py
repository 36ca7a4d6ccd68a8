"""A stress stream's loss as the checker judges it (hil.scenarios.families.stress.combine,
hil.bench_faults.COMPRESSED_BURSTS): the lost packets of a burst the bench's sender sent late
and the wire saw reach the DUT compressed are not the DUT's, and only those; every other lost
packet of the stream is judged, a late burst that the bench's shaper spaced out again or that
no capture saw among them."""

from __future__ import annotations

import pytest

from hil.scenarios.families.stress import combine
from hil.traffic.streams import StreamSpec

pytestmark = pytest.mark.selftest

SPEC = StreamSpec(id=7, direction="dut_rx", size=1400, burst=30, period_ms=1000, threshold_ms=1500, gap_us=100)


def _receiver(losses: dict[int, int], received: int) -> dict:  # type: ignore[type-arg]
    return {"received": received, "outoforder": 0, "late": 0, "duplicates": 0, "last_burst": 4,
            "losses": {str(b): n for b, n in losses.items()}}  # fmt: skip


def test_a_compressed_burst_excuses_only_its_own_packets() -> None:
    """Five bursts of 30: burst 2 went out compressed and lost 3, burst 4 (on time) lost 1: the
    stream's judged loss is burst 4's packet, 1 of 150, not zero (a whole stream excused would
    pass a DUT that loses packets of every burst once one burst of the bench was late)."""
    sender = {"sent": 150, "bursts": 5, "compressed_bursts": [2], "behind": 29, "max_behind_us": 2900}
    v = combine(SPEC, sender, _receiver({2: 3, 4: 1}, 146), wire_compressed=(2,))
    assert v["lost"] == 4 and v["excused_lost"] == 3
    assert v["loss_pct"] == pytest.approx(100 / 150)
    assert v["compressed_lossy_bursts"] == [2] and v["excused_bursts"] == [2]


def test_a_late_burst_the_shaper_spaced_out_again_is_judged() -> None:
    """The sender fell behind in burst 2, but the capture after the bench's shaper saw its packets
    at the link's pace (not compressed): the DUT was given the profile's train, so its 3 lost
    packets are the DUT's (on a 20-Mbit/s link a 1400-byte frame takes 577 us, more than the
    profile's 100-us gap: no burst of this stream can reach the DUT compressed)."""
    sender = {"sent": 150, "bursts": 5, "compressed_bursts": [2], "behind": 29, "max_behind_us": 2900}
    v = combine(SPEC, sender, _receiver({2: 3, 4: 1}, 146), wire_compressed=())
    assert v["excused_lost"] == 0 and v["loss_pct"] == pytest.approx(400 / 150)
    assert v["compressed_lossy_bursts"] == [2] and v["excused_bursts"] == []


def test_without_a_capture_nothing_is_excused() -> None:
    """A run without captures (or a burst the capture missed) has no evidence of what the DUT was
    given: the sender's own word is not enough."""
    sender = {"sent": 150, "bursts": 5, "compressed_bursts": [2], "behind": 29, "max_behind_us": 2900}
    v = combine(SPEC, sender, _receiver({2: 3}, 147))
    assert v["excused_lost"] == 0 and v["loss_pct"] == pytest.approx(300 / 150)


def test_a_burst_compressed_on_the_wire_but_sent_on_time_is_judged() -> None:
    """The capture saw burst 3 close together, but the sender sent it on its schedule: that is the
    profile's own pace on a fast link, and its loss is the DUT's."""
    sender = {"sent": 150, "bursts": 5, "compressed_bursts": [], "behind": 0, "max_behind_us": 80}
    v = combine(SPEC, sender, _receiver({3: 2}, 148), wire_compressed=(3,))
    assert v["excused_lost"] == 0 and v["loss_pct"] == pytest.approx(200 / 150)


def test_a_dut_sent_stream_is_never_excused() -> None:
    """The DUT's own streams report no compressed bursts: every lost packet is judged."""
    v = combine(SPEC, {"sent": 150, "bursts": 5}, _receiver({2: 3, 4: 1}, 146), wire_compressed=(2, 4))
    assert v["excused_lost"] == 0 and v["loss_pct"] == pytest.approx(400 / 150)


def test_compressed_bursts_without_loss_excuse_nothing() -> None:
    sender = {"sent": 150, "bursts": 5, "compressed_bursts": [1, 3], "behind": 10, "max_behind_us": 900}
    v = combine(SPEC, sender, _receiver({4: 2}, 148), wire_compressed=(1, 3))
    assert v["excused_lost"] == 0 and v["loss_pct"] == pytest.approx(200 / 150)
