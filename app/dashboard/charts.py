"""Geometry for the inline SVG charts, computed here so the templates only place shapes
(and Jinja escapes every label)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
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
    x_ticks: list[Tick] = field(default_factory=list)


@dataclass(frozen=True)
class Tick:
    at: float  # x (time axis) or y (amount axis) in the chart's coordinates
    label: str


def log_ticks(lo: float, hi: float, resource: str, most: int = 7) -> list[float]:
    """Round values between lo and hi for a log axis: 1, 2, 5 times a power of ten (CPU, in
    cores) or powers of two (memory, in bytes: 64Mi, 128Mi, ...); finer steps of the same kind
    where that leaves fewer than three (a narrow range), every other one until at most `most`
    are left."""
    if resource == "memory":
        grids = [(1.0,), (1.0, 1.5), (1.0, 1.25, 1.5, 1.75)]
        powers = [float(2**k) for k in range(10, 63)]
    else:
        grids = [(1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)]
        powers = [10.0**k for k in range(-4, 5)]
    ticks: list[float] = []
    for grid in grids:
        ticks = [m * p for p in powers for m in grid if lo <= m * p <= hi]
        if len(ticks) >= 3:
            break
    while len(ticks) > most:
        ticks = ticks[::2]
    return ticks


def histogram_chart(
    buckets: Sequence[Bucket],
    fmt: Any,
    marker: float | None = None,
    marker_label: str = "",
    resource: str = "cpu",
) -> Chart | None:
    """Bars on a log scale (the buckets grow 5% each, so they come out equally wide), spanning
    the used buckets and the marker (the target), so the target is shown where it falls; round
    ticks under them (`log_ticks`)."""
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
        x_ticks=[Tick(x(v), fmt(v)) for v in log_ticks(lo, hi, resource)],
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


def nice_step(span: float, count: int) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about `count` steps over
    `span` (> 0)."""
    raw = span / count
    magnitude: float = 10.0 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * 0.999)


def amount_unit(resource: str, top: float) -> float:
    """The unit the amount axis counts in: cores (1000 millicores) or GiB from one on, else
    millicores or MiB: its ticks fall on round numbers of what the labels show."""
    if resource == "cpu":
        return 1000.0 if top >= 1000 else 1.0
    return float(2**30) if top >= 2**30 else float(2**20)


TIME_STEPS = (3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400)


def time_ticks(t0: float, t1: float, most: int = 8) -> tuple[list[float], bool]:
    """Tick times on whole UTC hours or days, at most `most` of them between t0 and t1; and
    whether they are whole days."""
    step = next((s for s in TIME_STEPS if (t1 - t0) / s <= most), TIME_STEPS[-1])
    first = math.ceil(t0 / step) * step
    return [float(t) for t in range(int(first), int(t1) + 1, step)], step >= 86400


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    value: int  # the exact amount, for data-value
    title: str
    live: bool = False  # as of the recommender's last run, after the last history point


@dataclass(frozen=True)
class Line:
    cls: str  # "target", "requested", "usage-p50", "usage-p90"
    label: str
    points: list[Point]
    dots: bool = True  # a circle per point (with its exact value), else the line only

    @property
    def steps(self) -> list[tuple[float, float]]:
        """A step line's corners: a value holds until the next point."""
        out: list[tuple[float, float]] = []
        for i, p in enumerate(self.points):
            if i:
                out.append((p.x, self.points[i - 1].y))
            out.append((p.x, p.y))
        return out

    @property
    def path(self) -> str:
        """The polyline's points attribute (a step line)."""
        return " ".join(f"{x:.1f},{y:.1f}" for x, y in self.steps)


@dataclass(frozen=True)
class TimeChart:
    lines: list[Line]
    width: int = WIDTH
    height: int = 0
    left: float = 0  # the plot area: x from left to right, y from top (the highest tick) down
    right: float = 0  # to bottom (zero)
    top: float = 0
    bottom: float = 0
    y_ticks: list[Tick] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    band: str = ""  # the polygon between the p50 and p90 lines: where the usage mostly was
    top_label: str = ""
    start_label: str = ""
    end_label: str = ""


TIME_HEIGHT = 232
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 78.0, WIDTH - 12.0, 30.0, TIME_HEIGHT - 36.0


def time_chart(
    series: list[tuple[str, str, list[tuple[float, int | None]]]],
    fmt: Any,
    fmt_time: Any,
    dotted: frozenset[str] = frozenset({"target", "requested"}),
    resource: str = "cpu",
    live_after: float | None = None,
) -> TimeChart | None:
    """Lines of (class, label, [(unix time, amount or None)]) on one linear scale from 0 (the
    zero line at the bottom), with round ticks on both axes: the recommendation over time next
    to the requests and the usage. The classes in `dotted` get a circle per point. The area
    between the usage-p50 and usage-p90 lines is a band; points after `live_after` (the last
    history point) are marked live. None when there is no point at all."""
    known = [(t, v) for _, _, pts in series for t, v in pts if v is not None]
    if not known:
        return None
    t0, t1 = min(t for t, _ in known), max(t for t, _ in known)
    highest = max(v for _, v in known) or 1
    unit = amount_unit(resource, highest)
    step = nice_step(highest / unit, 4) * unit
    top = math.ceil(highest * 1.05 / step - 1e-9) * step  # a line at the top stays visible
    height = PLOT_BOTTOM - PLOT_TOP

    def x(t: float) -> float:
        if t1 == t0:
            return (PLOT_LEFT + PLOT_RIGHT) / 2
        return PLOT_LEFT + (PLOT_RIGHT - PLOT_LEFT) * (t - t0) / (t1 - t0)

    def y(v: float) -> float:
        return PLOT_BOTTOM - height * v / top

    lines = []
    for cls, label, pts in series:
        points = [
            Point(
                x(t),
                y(v),
                v,
                f"{label} {fmt(v)} at {fmt_time(t)}",
                live_after is not None and t > live_after,
            )
            for t, v in pts
            if v is not None
        ]
        if points:
            lines.append(Line(cls, label, points, cls in dotted))
    y_ticks = [
        Tick(y(i * step), "0" if i == 0 else fmt(i * step)) for i in range(round(top / step) + 1)
    ]
    times, whole_days = time_ticks(t0, t1)
    x_ticks = [Tick(x(t), _time_label(t, whole_days)) for t in times]
    return TimeChart(
        lines,
        height=TIME_HEIGHT,
        left=PLOT_LEFT,
        right=PLOT_RIGHT,
        top=PLOT_TOP,
        bottom=PLOT_BOTTOM,
        y_ticks=y_ticks,
        x_ticks=x_ticks,
        band=_band(lines),
        top_label=fmt(top),
        start_label=fmt_time(t0),
        end_label=fmt_time(t1),
    )


def _time_label(t: float, whole_days: bool) -> str:
    moment = datetime.fromtimestamp(t, UTC)
    if whole_days or (moment.hour, moment.minute) == (0, 0):
        return moment.strftime("%b %d")
    return moment.strftime("%H:%M")


def _band(lines: list[Line]) -> str:
    """The polygon from the p90 step line back along the p50 one (both at the same times)."""
    by_cls = {line.cls: line for line in lines}
    p90, p50 = by_cls.get("usage-p90"), by_cls.get("usage-p50")
    if p90 is None or p50 is None or [p.x for p in p90.points] != [p.x for p in p50.points]:
        return ""
    corners = p90.steps + list(reversed(p50.steps))
    return " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in corners)
