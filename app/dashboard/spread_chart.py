"""Geometry of the Nodes page's chart of the cluster's spread over time (app.store.node_spread):
the CPU and memory spread (max - min of the nodes' levels) in percentage points, per point the
leader recorded. Computed here so the template only places shapes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.placement.spread import SpreadPoint
from app.dashboard.charts import WIDTH, Tick, _time_label, nice_step, time_ticks
from app.dashboard.format import when

HEIGHT = 220
LEFT, RIGHT, TOP, BOTTOM = 58.0, WIDTH - 12.0, 28.0, HEIGHT - 36.0
SERIES = (("cpu", "CPU spread"), ("memory", "memory spread"))


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    value: float  # the spread, a fraction of allocatable (data-value)
    title: str


@dataclass(frozen=True)
class SpreadLine:
    cls: str  # "cpu", "memory"
    label: str
    dots: list[Dot]

    @property
    def path(self) -> str:
        return " ".join(f"{d.x:.1f},{d.y:.1f}" for d in self.dots)


@dataclass(frozen=True)
class SpreadChart:
    lines: list[SpreadLine]
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    start_label: str
    end_label: str
    width: int = WIDTH
    height: int = HEIGHT
    left: float = LEFT
    right: float = RIGHT
    top: float = TOP
    bottom: float = BOTTOM


def spread_chart(points: Sequence[tuple[float, SpreadPoint]]) -> SpreadChart | None:
    """A line per resource over the points' times, from 0 up to a round number of percentage
    points above the highest; None without points."""
    if not points:
        return None
    t0, t1 = points[0][0], points[-1][0]
    values = {
        "cpu": [p.cpu_spread for _, p in points],
        "memory": [p.memory_spread for _, p in points],
    }
    highest = max(max(v) for v in values.values()) * 100 or 1.0
    step = nice_step(highest, 4)
    top = math.ceil(highest * 1.05 / step - 1e-9) * step  # percentage points

    def x(t: float) -> float:
        if t1 == t0:
            return (LEFT + RIGHT) / 2
        return LEFT + (RIGHT - LEFT) * (t - t0) / (t1 - t0)

    def y(fraction: float) -> float:
        return BOTTOM - (BOTTOM - TOP) * fraction * 100 / top

    lines = [
        SpreadLine(
            cls,
            label,
            [
                Dot(x(t), y(v), v, f"{label} {v * 100:.1f} points at {when(t)}")
                for (t, _), v in zip(points, values[cls], strict=True)
            ],
        )
        for cls, label in SERIES
    ]
    y_ticks = [Tick(y(i * step / 100), f"{i * step:g}") for i in range(round(top / step) + 1)]
    times, whole_days = time_ticks(t0, t1)
    x_ticks = [Tick(x(t), _time_label(t, whole_days)) for t in times]
    return SpreadChart(lines, y_ticks, x_ticks, when(t0), when(t1))
