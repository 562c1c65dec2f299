"""Geometry for the inline SVG charts, computed here so the templates only place shapes
(and Jinja escapes every label)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.store.histograms import Bucket

WIDTH, HEIGHT = 600, 160


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    title: str


@dataclass(frozen=True)
class Chart:
    bars: list[Bar]
    width: int = WIDTH
    height: int = HEIGHT
    left_label: str = ""
    right_label: str = ""
    marker_x: float | None = None
    marker_label: str = ""


def histogram_chart(
    buckets: Sequence[Bucket], fmt: Any, marker: float | None = None, marker_label: str = ""
) -> Chart | None:
    """Bars on a log scale (the buckets grow 5% each, so they come out equally wide), spanning
    the used buckets and the marker (the target), so the target is shown where it falls."""
    if not buckets:
        return None
    ends = [b.end for b in buckets]
    lo = min(b.start or b.end / 1.05 for b in buckets)
    hi = max(ends)
    if marker is not None and marker > 0:
        lo, hi = min(lo, marker), max(hi, marker)
    lo, hi = lo / 1.1, hi * 1.1
    span = math.log(hi / lo)

    def x(v: float) -> float:
        return WIDTH * math.log(max(v, lo) / lo) / span

    heaviest = max(b.weight for b in buckets) or 1.0
    bars = []
    for b in buckets:
        h = max(1.0, (HEIGHT - 20) * b.weight / heaviest)
        left, right = x(b.start or b.end / 1.05), x(b.end)
        bars.append(
            Bar(
                x=left,
                y=HEIGHT - 20 - h,
                width=max(1.0, right - left - 0.5),
                height=h,
                title=f"{fmt(b.start)} to {fmt(b.end)}: weight {b.weight:.3g}",
            )
        )
    return Chart(
        bars,
        left_label=fmt(lo),
        right_label=fmt(hi),
        marker_x=x(marker) if marker is not None and marker > 0 else None,
        marker_label=f"{marker_label} {fmt(marker)}" if marker is not None else "",
    )


def comparison_chart(pairs: list[tuple[str, float, str]]) -> Chart:
    """Horizontal bars (label, value, shown text) on one scale: requested vs recommended."""
    top = max((v for _, v, _ in pairs), default=0) or 1.0
    row = 34
    bars = [
        Bar(
            x=200,
            y=i * row + 6,
            width=max(1.0, (WIDTH - 210) * v / top),
            height=row - 12,
            title=f"{label}: {text}",
        )
        for i, (label, v, text) in enumerate(pairs)
    ]
    return Chart(bars, height=row * len(pairs) + 4)


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    value: int  # the exact amount, for data-value
    title: str


@dataclass(frozen=True)
class Line:
    cls: str  # "target", "requested", "usage-p50", "usage-p90"
    label: str
    points: list[Point]
    dots: bool = True  # a circle per point (with its exact value), else the line only

    @property
    def path(self) -> str:
        """The polyline's points attribute: a step line (a value holds until the next point)."""
        out: list[str] = []
        for i, p in enumerate(self.points):
            if i:
                out.append(f"{p.x:.1f},{self.points[i - 1].y:.1f}")
            out.append(f"{p.x:.1f},{p.y:.1f}")
        return " ".join(out)


@dataclass(frozen=True)
class TimeChart:
    lines: list[Line]
    width: int = WIDTH
    height: int = HEIGHT
    top_label: str = ""
    start_label: str = ""
    end_label: str = ""


def time_chart(
    series: list[tuple[str, str, list[tuple[float, int | None]]]],
    fmt: Any,
    fmt_time: Any,
    dotted: frozenset[str] = frozenset({"target", "requested"}),
) -> TimeChart | None:
    """Lines of (class, label, [(unix time, amount or None)]) on one linear scale from 0: the
    recommendation over time next to the requests and the usage. The classes in `dotted` get a
    circle per point. None when there is no point at all."""
    known = [(t, v) for _, _, pts in series for t, v in pts if v is not None]
    if not known:
        return None
    t0, t1 = min(t for t, _ in known), max(t for t, _ in known)
    top = max(v for _, v in known) * 1.1 or 1.0
    plot = HEIGHT - 20  # room for the time labels underneath

    def x(t: float) -> float:
        return WIDTH / 2 if t1 == t0 else 40 + (WIDTH - 50) * (t - t0) / (t1 - t0)

    lines = []
    for cls, label, pts in series:
        points = [
            Point(x(t), plot - plot * v / top, v, f"{label} {fmt(v)} at {fmt_time(t)}")
            for t, v in pts
            if v is not None
        ]
        if points:
            lines.append(Line(cls, label, points, cls in dotted))
    return TimeChart(lines, top_label=fmt(top), start_label=fmt_time(t0), end_label=fmt_time(t1))
