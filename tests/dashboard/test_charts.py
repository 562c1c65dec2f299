"""Geometry of the dashboard's SVG charts (pure functions, no app)."""

from __future__ import annotations

import pytest

from app.dashboard.charts import (
    PLOT_BOTTOM,
    PLOT_LEFT,
    PLOT_RIGHT,
    PLOT_TOP,
    log_ticks,
    nice_step,
    time_chart,
)
from app.dashboard.format import cpu, read_cpu, read_memory, when

T0 = 1_720_051_200.0  # 2024-07-04 00:00 UTC


def test_time_chart_places_points_by_time_and_value() -> None:
    chart = time_chart(
        [
            ("target", "target", [(T0, 500), (T0 + 3600, 250), (T0 + 7200, 1000)]),
            ("requested", "requested", [(T0, None), (T0 + 3600, 800), (T0 + 7200, 800)]),
        ],
        cpu,
        when,
    )
    assert chart is not None
    target, requested = chart.lines
    xs = [p.x for p in target.points]
    assert xs == sorted(xs) and xs[0] == PLOT_LEFT and xs[-1] == PLOT_RIGHT
    assert xs[1] == pytest.approx((xs[0] + xs[2]) / 2)  # time is linear
    ys = {p.value: p.y for p in target.points}
    plot = PLOT_BOTTOM
    assert ys[1000] < ys[500] < ys[250] < plot  # higher amounts are higher up
    assert plot - ys[500] == pytest.approx((plot - ys[1000]) / 2)  # linear from 0
    assert [p.value for p in requested.points] == [800, 800]  # unknown requests are skipped
    assert chart.top_label == "1250m"  # the tick above the highest amount: 1000m * 1.05
    assert chart.start_label == "2024-07-04 00:00 UTC"
    assert chart.end_label == "2024-07-04 02:00 UTC"
    # a step line: each value holds until the next point
    assert target.path.split() == [
        f"{xs[0]:.1f},{ys[500]:.1f}",
        f"{xs[1]:.1f},{ys[500]:.1f}",
        f"{xs[1]:.1f},{ys[250]:.1f}",
        f"{xs[2]:.1f},{ys[250]:.1f}",
        f"{xs[2]:.1f},{ys[1000]:.1f}",
    ]


def test_time_chart_single_point_and_nothing() -> None:
    chart = time_chart([("target", "target", [(T0, 300)])], cpu, when)
    assert chart is not None
    [p] = chart.lines[0].points
    assert p.x == (PLOT_LEFT + PLOT_RIGHT) / 2
    assert "300m" in p.title and "2024-07-04 00:00 UTC" in p.title
    assert time_chart([("target", "target", [])], cpu, when) is None
    assert time_chart([("requested", "requested", [(T0, None)])], cpu, when) is None


def test_the_amount_axis_has_round_ticks_from_a_zero_line() -> None:
    assert [nice_step(s, 4) for s in (1.0, 15.062, 61.19, 0.3)] == [0.25, 5, 20, 0.1]
    chart = time_chart(
        [("target", "target", [(T0, 15062), (T0 + 86400 * 8, 9000)])],
        read_cpu,
        when,
        resource="cpu",
    )
    assert chart is not None
    # cores, on round numbers, from 0 (at the bottom: the zero line) to above the highest
    assert [t.label for t in chart.y_ticks] == ["0", "5 cores", "10 cores", "15 cores", "20 cores"]
    assert chart.y_ticks[0].at == PLOT_BOTTOM and chart.y_ticks[-1].at == PLOT_TOP
    # time: one tick a day (or two), on midnight UTC, labelled with the date
    assert [t.label for t in chart.x_ticks][:3] == ["Jul 04", "Jul 05", "Jul 06"]
    assert chart.x_ticks[0].at == PLOT_LEFT
    memory = time_chart(
        [("target", "target", [(T0, 62659 * 2**20)])], read_memory, when, resource="memory"
    )
    assert memory is not None
    assert [t.label for t in memory.y_ticks] == ["0", "20 GiB", "40 GiB", "60 GiB", "80 GiB"]


def test_hours_are_ticked_within_a_day() -> None:
    chart = time_chart([("target", "target", [(T0 + 600, 300), (T0 + 6 * 3600, 300)])], cpu, when)
    assert chart is not None
    assert [t.label for t in chart.x_ticks] == [
        "01:00",
        "02:00",
        "03:00",
        "04:00",
        "05:00",
        "06:00",
    ]


def test_p50_and_p90_enclose_a_band() -> None:
    chart = time_chart(
        [
            ("usage-p90", "usage p90", [(T0, 400), (T0 + 3600, 600)]),
            ("usage-p50", "usage p50", [(T0, 200), (T0 + 3600, 300)]),
        ],
        cpu,
        when,
    )
    assert chart is not None
    p90, p50 = chart.lines
    corners = chart.band.split()
    assert corners[: len(p90.path.split())] == p90.path.split()
    assert corners[len(p90.path.split()) :] == list(reversed(p50.path.split()))


def test_histogram_ticks_are_round_amounts() -> None:
    assert log_ticks(0.04, 0.6, "cpu") == [0.05, 0.1, 0.2, 0.5]  # cores
    assert log_ticks(100 * 2**20, 3 * 2**30, "memory") == [
        2.0**27,
        2.0**28,
        2.0**29,
        2.0**30,
        2.0**31,
    ]
    # a narrow range: finer steps, still round (831Mi to 1.2 GiB)
    assert log_ticks(831 * 2**20, 1.2 * 2**30, "memory") == [896 * 2**20, 2.0**30]
    many = log_ticks(0.001, 100, "cpu")
    assert len(many) <= 7 and many == sorted(many)
