"""Geometry of the dashboard's SVG charts (pure functions, no app)."""

from __future__ import annotations

import pytest

from app.dashboard.charts import HEIGHT, WIDTH, time_chart
from app.dashboard.format import cpu, when

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
    assert xs == sorted(xs) and xs[0] == 40 and xs[-1] == WIDTH - 10
    assert xs[1] == pytest.approx((xs[0] + xs[2]) / 2)  # time is linear
    ys = {p.value: p.y for p in target.points}
    plot = HEIGHT - 20
    assert ys[1000] < ys[500] < ys[250] < plot  # higher amounts are higher up
    assert plot - ys[500] == pytest.approx((plot - ys[1000]) / 2)  # linear from 0
    assert [p.value for p in requested.points] == [800, 800]  # unknown requests are skipped
    assert chart.top_label == "1100m"
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
    assert p.x == WIDTH / 2
    assert "300m" in p.title and "2024-07-04 00:00 UTC" in p.title
    assert time_chart([("target", "target", [])], cpu, when) is None
    assert time_chart([("requested", "requested", [(T0, None)])], cpu, when) is None
