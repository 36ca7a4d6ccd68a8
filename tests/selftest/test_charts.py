"""The report's charts (hil/scenarios/charts.py): axes zoomed to what they show with the reference
lines inside the frame, the limit and offered-rate lines drawn, a stress chart without loss said in
words. Each chart is rendered from small synthetic data; the figure is caught on its way to PNG."""

import pytest

from hil.scenarios import charts
from hil.scenarios.charts import limit_line, search_chart, sweep_chart, timeline_chart, zoomed_limits

pytestmark = pytest.mark.selftest

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def figures(monkeypatch):
    """The figures the charts render, kept for their axes after the PNG is made."""
    caught = []
    real = charts._png

    def catch(fig, *args, **kwargs):
        caught.append(fig)
        return real(fig, *args, **kwargs)

    monkeypatch.setattr(charts, "_png", catch)
    return caught


def headroom(limits: tuple[float, float], value: float) -> float:
    """How far below the top of the axis a value sits, as a share of the axis."""
    bottom, top = limits
    return (top - value) / (top - bottom)


def test_zoomed_limits_keep_the_highest_line_off_the_frame():
    # TCP at 100 Mbit/s: threshold 93, points 94.8-94.92, theory 94.93
    lo, hi = zoomed_limits([93.0, 94.8, 94.92, 94.93])
    assert 0.05 <= headroom((lo, hi), 94.93) <= 0.08
    assert 85 < lo < 93  # zoomed, not squashed at the top of 0-100, and the threshold inside
    assert (93.0 - lo) / (hi - lo) >= 0.05


def test_zoomed_limits_start_at_zero_for_a_wide_sweep_and_below_it_for_a_zero():
    assert zoomed_limits([44.3, 49.2, 86.1, 95.6])[0] == 0.0  # a UDP length sweep: 44-96 Mbit/s
    lo, hi = zoomed_limits([0.0, 3.0])  # a point at 0 is not drawn on the bottom frame
    assert lo < 0 < 3 < hi


def test_zoomed_limits_do_not_blow_up_noise():
    lo, hi = zoomed_limits([94.90, 94.93])
    assert hi - lo >= 0.05 * 94.93  # a 0.03 Mbit/s spread is not stretched over the whole frame
    assert 0.05 <= headroom((lo, hi), 94.93) <= 0.08
    assert zoomed_limits([]) == (0.0, 1.0)
    assert zoomed_limits([0.0, 0.0])[1] > 0.0


def test_limit_line_takes_one_limit_per_point():
    bounds = [
        (64.0, [("min", "efficiency_pct", 85.0), ("max", "loss_pct", 0.5)]),
        (1448.0, [("min", "mbps", 80.0), ("min", "efficiency_pct", 90.0)]),
    ]
    assert limit_line(bounds, "min", "efficiency_pct") == [(64.0, 85.0), (1448.0, 90.0)]
    assert limit_line(bounds, "min", "mbps") == [(1448.0, 80.0)]
    assert limit_line(bounds, "max", "mbps") == []


def test_sweep_chart_frames_theory_threshold_and_offered_rate(figures):
    theory = [(64.0, 49.23), (500.0, 88.34), (1448.0, 95.64)]
    offered = [(x, round(y * 0.9, 3)) for x, y in theory]
    png = sweep_chart(
        "UDP length sweep",
        "length (bytes)",
        {"dut_rx": offered},
        theory=theory,
        threshold=[(64.0, 40.0), (500.0, 70.0), (1448.0, 80.0)],
        offered=offered,
        min_efficiency=[(x, 85.0) for x, _ in theory],
    )
    assert png.startswith(PNG)
    (fig,) = figures
    top, eff = fig.axes[:2]
    assert 0.05 <= headroom(top.get_ylim(), 95.64) <= 0.08
    labels = top.get_legend_handles_labels()[1]
    assert "offered rate (90 % of theoretical)" in labels
    assert "threshold (min median)" in labels  # a step: the limits differ per point
    # the efficiency panel: 90 % measured, the 85 % limit and 100 % inside the frame
    lo, hi = eff.get_ylim()
    assert lo < 85.0 and hi > 100.0 and 0.05 <= headroom((lo, hi), 100.0) <= 0.08
    points = next(line for line in eff.get_lines() if line.get_label() == "dut_rx")
    assert list(points.get_ydata()) == pytest.approx([90.0, 90.0, 90.0], abs=0.01)
    assert "threshold (min efficiency): 85 %" in eff.get_legend_handles_labels()[1]


def test_sweep_chart_zooms_a_tcp_sweep_near_its_theory(figures):
    xs = [64.0, 500.0, 1448.0]
    sweep_chart(
        "TCP length sweep",
        "length (bytes)",
        {"dut_tx": [(x, 94.85) for x in xs]},
        theory=[(x, 94.93) for x in xs],
        threshold=[(x, 93.0) for x in xs],
    )
    lo, hi = figures[0].axes[0].get_ylim()
    assert 80 < lo < 93 and 0.05 <= headroom((lo, hi), 94.93) <= 0.08
    assert "threshold (min median): 93 Mbit/s" in figures[0].axes[0].get_legend_handles_labels()[1]


def test_sweep_chart_without_theory_has_one_panel_and_keeps_the_band(figures):
    sweep_chart("ladder", "TCP_WND (bytes)", {"PC->DUT": [(2920.0, 1.2), (5840.0, 2.3)]}, logx=True)
    assert len(figures[0].axes) == 1
    sweep_chart(
        "ladder",
        "TCP_WND (bytes)",
        {"PC->DUT": [(2920.0, 1.15), (5840.0, 2.31)]},
        theory=[(2920.0, 1.16), (5840.0, 2.32)],
        logx=True,
        band_pct=(90.0, 105.0),
    )
    top, eff = figures[1].axes[:2]
    assert top.get_ylim()[1] > 2.32 * 1.05  # the band's top edge is inside the frame too
    assert eff.get_ylim()[0] < 90.0 < 105.0 < eff.get_ylim()[1]


def stream_series(lost_at: dict[int, float] | None = None) -> list[tuple[float, float]]:
    losses = lost_at or {}
    return [(b * 0.2, losses.get(b, 0.0)) for b in range(50)]


def test_stress_chart_without_loss_is_text_not_empty_panels(figures):
    series = {"stream 1 (dut_tx)": stream_series(), "stream 4 (dut_rx)": stream_series()}
    png = timeline_chart("stress", series, "lost", {"stream 1 (dut_tx)": (0, 400), "stream 4 (dut_rx)": (0, 12800)})
    assert png.startswith(PNG)
    (fig,) = figures
    assert fig.axes == []  # no panels at all
    text = "\n".join(t.get_text() for t in fig.texts)
    assert "0 lost in every stream (0 of 13 200 packets in total)" in text
    assert "stream 1 (dut_tx): 0 of 400 lost" in text
    assert "stream 4 (dut_rx): 0 of 12 800 lost" in text


def test_stress_chart_draws_only_the_streams_that_lost(figures):
    series = {"stream 1": stream_series(), "stream 2": stream_series({10: 3.0}), "stream 3": stream_series()}
    totals = {"stream 1": (0, 400), "stream 2": (3, 400), "stream 3": (0, 100)}
    timeline_chart("stress", series, "lost", totals)
    (fig,) = figures
    panels = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_title() for ax in panels] == ["stream 2: 3 of 400 lost"]
    lo, hi = panels[0].get_ylim()
    assert lo < 0.0 and hi > 3.0  # neither the zero line nor the peak on the frame
    words = "\n".join(t.get_text() for ax in fig.axes for t in ax.texts)
    assert "stream 1: 0 of 400 lost" in words and "stream 3: 0 of 100 lost" in words


def test_search_chart_states_the_rate_found_and_the_loss_target(figures):
    trials = [(95.6, False, 0.0, 90.5), (90.0, True, 90.0, 90.5), (90.4, True, 90.4, 90.5)]
    png = search_chart(
        "capacity", {"1448 B": trials, "64 B": [(49.0, False, 0.0, 4.2)]}, {"1448 B": 90.4, "64 B": None},
        loss_target_pct={"1448 B": 0.1, "64 B": 0.1},
    )  # fmt: skip
    assert png.startswith(PNG)
    (fig,) = figures
    titles = [ax.get_title() for ax in fig.axes]
    assert "1448 B: found 90.400 Mbit/s at loss <= 0.1 %" in titles
    assert "64 B: no rate found at loss <= 0.1 %" in titles
    top = fig.axes[0]
    assert top.get_ylim()[1] > 95.6 * 1.05  # the highest trial is off the frame


def test_search_chart_says_when_a_search_counted_no_trial(figures):
    """A generator short of its first load twice: the search stops with nothing counted."""
    png = search_chart("capacity", {"1448 B": [], "500 B": [(88.3, True, 88.3, 88.3)]}, {"1448 B": None, "500 B": 88.3})
    assert png.startswith(PNG)
    (fig,) = figures
    assert "1448 B: no rate found" in [ax.get_title() for ax in fig.axes]
    assert "no trial" in [t.get_text() for ax in fig.axes for t in ax.texts]
