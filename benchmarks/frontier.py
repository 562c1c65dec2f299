"""`benchmarks/quality.py --frontier`: each strategy's risk knob swept under the rolling protocol,
the curve of under-provisioning against unused request it draws (CPU and memory), and the
hindsight bound of the same protocol (benchmarks/rolling_bound.py) beside them.

The knobs (SWEEPS): `vpa` its target percentile (CPU and memory together) and its safety margin;
`krr-simple` its CPU percentile and its memory buffer; `balanced` its memory weight (its CPU is
vpa's default), and `balanced-rolling`, `balanced` with the margin and half-life tuned for the
rolling protocol on training traces (CURVES), its weight likewise. One point per setting: the
mean over containers of under-provisioning (share of samples above the request in force) and
unused request (a sample above it counts as 0 unused), and the updates per day the updater made.
The default of each strategy is marked `*`.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import rolling_bound as rb

from app.core.recommend.estimator import pod_minimum
from app.core.recommend.settings import MIB, RecommenderSettings
from app.core.recommend.strategies import REGISTRY, Strategy, configure
from app.core.recommend.trace import TraceRow

# The knob's settings per strategy, from the least to the most generous; the default among them.
SWEEPS: dict[str, list[dict[str, object]]] = {
    "vpa": [
        {"targetCpuPercentile": p, "targetMemoryPercentile": p, "safetyMarginFraction": m}
        for p, m in (
            (0.5, 0.0),
            (0.5, 0.15),
            (0.7, 0.15),
            (0.8, 0.15),
            (0.9, 0.0),
            (0.9, 0.15),
            (0.95, 0.15),
            (0.95, 0.3),
            (0.95, 0.6),
        )
    ],
    "krr-simple": [
        {"cpuPercentile": p, "memoryBufferPercentage": b}
        for p, b in ((50, 1), (70, 5), (80, 10), (90, 10), (95, 15), (99, 30), (99, 60))
    ],
    "balanced": [{"memoryTimeAboveWeight": w} for w in (1, 2, 4, 8, 12, 24, 48, 96)],
    "balanced-rolling": [
        {"memoryTimeAboveWeight": w} for w in (1, 2, 3, 4, 5, 6, 8, 12, 24, 48, 96)
    ],
}
# A curve that is a strategy with some parameters set: `balanced` as tuned for the rolling
# protocol on training traces only (docs/strategies.md "Quality as a trade-off curve").
CURVES: dict[str, tuple[str, dict[str, object]]] = {
    "balanced-rolling": ("balanced", {"memoryMarginPercentage": 0, "memoryHalfLife": 96}),
}
SMALL_SWEEPS: dict[str, list[dict[str, object]]] = {  # --small-sweep: for tests
    "vpa": [SWEEPS["vpa"][1], SWEEPS["vpa"][5]],
    "krr-simple": [SWEEPS["krr-simple"][4]],
    "balanced": [SWEEPS["balanced"][4], SWEEPS["balanced"][1]],
}


@dataclass(frozen=True)
class Point:
    strategy: str
    setting: str  # the knob's parameters
    default: bool
    cpu_under: float
    cpu_unused: float
    memory_under: float
    memory_unused: float
    updates_per_day: float
    quick_per_day: float


def sweep(small: bool = False) -> list[tuple[str, str, bool, Strategy]]:
    """(strategy name, setting text, is the default, the configured strategy) per point."""
    out = []
    for curve, settings in (SMALL_SWEEPS if small else SWEEPS).items():
        name, fixed = CURVES.get(curve, (curve, {}))
        for knob in settings:
            params = {**fixed, **knob}
            strategy = configure(name, params)
            text = ", ".join(f"{k}={v:g}" for k, v in params.items())
            same = not fixed and all(
                float(v) == default_value(name, k)  # type: ignore[arg-type]
                for k, v in params.items()
            )
            out.append((curve, text, same, strategy))
    return out


def default_value(strategy: str, param: str) -> float:
    """A parameter's value when a policy does not set it: its default, or the global
    recommender setting it stands for."""
    p = next(p for p in REGISTRY[strategy].params if p.name == param)
    if p.default is not None:
        return float(p.default)
    assert p.setting is not None
    return float(getattr(RecommenderSettings(), p.setting))


def floors(containers: int) -> tuple[float, float]:
    """The lowest CPU (cores) and memory (bytes) request any swept strategy gives a container:
    vpa's pod minimum, krr-simple's cpuMin (10m) and memMin (100 MiB)."""
    pod = pod_minimum(containers, RecommenderSettings())
    return min(pod.cpu, 10) / 1000.0, float(min(pod.memory, 100 * MIB))


def bound_containers(
    rows: list[TraceRow], cut: float, step: float, period: float
) -> tuple[list[rb.Container], list[rb.Container]]:
    """The judged part's containers for the rolling hindsight bound: (CPU, memory)."""
    later = [r for r in rows if r.time >= cut and r.event is None]
    names = sorted({r.container for r in later})
    cpu_floor, memory_floor = floors(len(names))
    cpu, memory = [], []
    for c in names:
        mine = [r for r in later if r.container == c]
        c_rows = [r for r in mine if r.cpu is not None]
        m_rows = [r for r in mine if r.memory is not None]
        if not c_rows or not m_rows:
            continue
        cpu.append(
            rb.container(
                [r.time for r in c_rows],
                [float(r.cpu or 0.0) for r in c_rows],
                start=cut,
                step=step,
                period=period,
                floor=cpu_floor,
            )
        )
        memory.append(
            rb.container(
                [r.time for r in m_rows],
                [float(r.memory or 0.0) for r in m_rows],
                start=cut,
                step=step,
                period=period,
                floor=memory_floor,
            )
        )
    return cpu, memory


def points(
    labels: Sequence[tuple[str, str, bool, str]], scores: dict[str, list[Any]]
) -> list[Point]:
    """Mean figures per swept setting; `labels`: (strategy, setting, default, result key)."""
    out = []
    for name, text, default, key in labels:
        s = scores[key]

        def mean(field: str, s: list[Any] = s) -> float:
            return statistics.fmean(getattr(x, field) for x in s)

        out.append(
            Point(
                name,
                text,
                default,
                mean("cpu_under"),
                mean("cpu_unused"),
                mean("memory_under"),
                mean("memory_unused"),
                mean("updates_per_day"),
                mean("quick_per_day"),
            )
        )
    return out


def bound_curve(containers: Sequence[rb.Container], unders: Sequence[float]) -> list[float]:
    return [rb.unused_bound(containers, u) for u in unders]


def at(curve: list[tuple[float, float]], under: float) -> float | None:
    """The unused request of a curve (points (under, unused)) at `under`: linear between the
    two settings whose under-provisioning is on either side of it (None outside its range)."""
    pts = sorted(curve)
    for (u0, x0), (u1, x1) in itertools.pairwise(pts):
        if u0 <= under <= u1:
            return x0 if u1 == u0 else x0 + (x1 - x0) * (under - u0) / (u1 - u0)
    if pts and pts[0][0] == under:
        return pts[0][1]
    return None


def pct(x: float) -> str:
    return f"{x * 100:.2f}%"


def table(pts: Sequence[Point]) -> list[list[str]]:
    return [
        [
            p.strategy + (" *" if p.default else ""),
            p.setting,
            pct(p.cpu_under),
            pct(p.cpu_unused),
            pct(p.memory_under),
            pct(p.memory_unused),
            f"{p.updates_per_day:.2f}",
            f"{p.quick_per_day:.2f}",
        ]
        for p in pts
    ]


HEADERS = [
    "strategy",
    "setting",
    "CPU under",
    "CPU unused",
    "memory under",
    "memory unused",
    "updates/day",
    "of which <12h",
]


def bound_lines(pts: Sequence[Point], cpu: list[rb.Container], memory: list[rb.Container]) -> str:
    """The bound at each default's under-provisioning, and how much of vpa's gap each curve
    closes there."""
    lines = []
    vpa = next(p for p in pts if p.strategy == "vpa" and p.default)
    for res, under_of, unused_of, conts in (
        ("CPU", "cpu_under", "cpu_unused", cpu),
        ("memory", "memory_under", "memory_unused", memory),
    ):
        u0 = getattr(vpa, under_of)
        bound = rb.unused_bound(conts, u0)
        x_vpa = getattr(vpa, unused_of)
        lines.append(
            f"{res}: at vpa's default under-provisioning ({pct(u0)}) vpa leaves {pct(x_vpa)} "
            f"unused; the hindsight bound {pct(bound)}"
        )
        for name in dict.fromkeys(p.strategy for p in pts):
            if name == "vpa":
                continue
            mine = [p for p in pts if p.strategy == name]
            x = at([(getattr(p, under_of), getattr(p, unused_of)) for p in mine], u0)
            if x is None:
                lines.append(f"  {name}: its curve does not reach {pct(u0)} under")
                continue
            updates = at([(getattr(p, under_of), p.updates_per_day) for p in mine], u0)
            closed = (x_vpa - x) / (x_vpa - bound) if x_vpa > bound else float("nan")
            lines.append(
                f"  {name}: {pct(x)} unused there (its curve, interpolated): "
                f"{closed * 100:.0f}% of vpa's gap to the bound closed, "
                f"{updates or 0.0:.2f} updates/day (vpa {vpa.updates_per_day:.2f})"
            )
    return "\n".join(lines)


def plot(
    path: Path,
    panels: Sequence[tuple[str, Sequence[Point], list[rb.Container], list[rb.Container]]],
) -> None:
    """One row per data set (title, points, CPU and memory bound containers), CPU and memory
    side by side: unused request against under-provisioning, one curve per strategy, its
    default marked, and the hindsight bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(panels), 2, figsize=(12, 4.6 * len(panels)), squeeze=False)
    colours = {
        "vpa": "tab:blue",
        "krr-simple": "tab:orange",
        "balanced": "tab:green",
        "balanced-rolling": "tab:red",
    }
    for row, (title, pts, cpu, memory) in zip(axes, panels, strict=True):
        for ax, res, conts in ((row[0], "cpu", cpu), (row[1], "memory", memory)):
            top = 0.0
            for name in dict.fromkeys(p.strategy for p in pts):
                mine = sorted(
                    (
                        (getattr(p, f"{res}_under"), getattr(p, f"{res}_unused"), p)
                        for p in pts
                        if p.strategy == name
                    ),
                    key=lambda item: (item[0], item[1]),
                )
                xs = [u * 100 for u, _, _ in mine]
                ys = [x * 100 for _, x, _ in mine]
                top = max(top, *(u for u, _, _ in mine))
                colour = colours.get(name, "tab:red")
                ax.plot(xs, ys, "o-", color=colour, label=name, markersize=4)
                for u, x, p in mine:
                    if p.default:
                        ax.plot(u * 100, x * 100, "*", color=colour, markersize=15)
            unders = [0.0, *np.geomspace(0.0005, max(top, 0.001) * 1.05, 30)]
            ys = bound_curve(conts, unders)
            ax.plot(
                [u * 100 for u in unders],
                [y * 100 for y in ys],
                "k--",
                label="hindsight bound (rolling)",
            )
            ax.set_xscale("symlog", linthresh=0.1)
            ax.set_xlabel(
                f"{'CPU' if res == 'cpu' else 'memory'} under-provisioning (% of samples)"
            )
            ax.set_ylabel("unused request (%)")
            ax.set_title(f"{title}: {'CPU' if res == 'cpu' else 'memory'}")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
