"""A node's level per resource (used / allocatable, from NodeMetrics) over three windows.

Each window is an exponentially weighted mean of the samples with the window's length as its time
constant: a sample `dt` seconds after the previous one moves the mean by `1 - exp(-dt / window)`
of the way to it. The samples of the last window weigh 63% of the mean, those of the three windows
before it most of the rest. Unlike a sliding window this needs one number per node and window,
whatever the sampling rate, and samples taken at irregular times (a missed run, a leader change)
weigh by the time they stand for, not by their count. The first sample of a node sets every
window; a sample no newer than the last one folded in changes nothing.

The latest sample is kept too, and no window reads below it (`effective`): the windows remember a
node's past load and must not hide its present one. A pod placed a minute ago is in the next
sample already, but would take a window's length to weigh fully in the window's mean: without
the floor, the 15-minute level shows 6% of a new pod's usage a minute after it starts, and every
pod of the next minutes goes to the same node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# (name, seconds): the short window follows a burst, the day window a node's daily pattern.
WINDOWS: tuple[tuple[str, float], ...] = (("15m", 900.0), ("1h", 3600.0), ("1d", 86400.0))
Levels = tuple[float, ...]  # one level (a fraction of allocatable) per window of WINDOWS


@dataclass(frozen=True, slots=True)
class NodeLevel:
    """What the leader keeps of a node: its allocatable and its levels per window."""

    name: str
    cpu_allocatable: int  # millicores
    memory_allocatable: int  # bytes
    cpu: Levels  # used / allocatable, per window
    memory: Levels
    metrics_at: float  # Unix time of the newest NodeMetrics sample folded in
    cpu_now: float | None = None  # the newest sample's level; None: unknown
    memory_now: float | None = None
    # the level in each of the next hours from its pods' daily profiles (first: the present
    # one); empty: no profile known (app.core.placement.ahead)
    cpu_ahead: Levels = ()
    memory_ahead: Levels = ()
    # when this process folded the node's first sample, which set every window (None: before
    # this process, or read from the store): a pod started before it is wholly in the windows.
    # Not stored, so not compared: a level read back equals the one saved.
    first_at: float | None = field(default=None, compare=False)

    def effective(self) -> tuple[Levels, Levels]:
        """(CPU, memory) per window, none below the newest sample."""
        return floor(self.cpu, self.cpu_now), floor(self.memory, self.memory_now)


def floor(levels: Levels, now: float | None) -> Levels:
    return levels if now is None else tuple(max(x, now) for x in levels)


def share(used: int, allocatable: int) -> float:
    """`used` as a fraction of `allocatable` (0 when nothing is allocatable)."""
    return used / allocatable if allocatable > 0 else 0.0


def fold(
    previous: NodeLevel | None,
    name: str,
    cpu_allocatable: int,
    memory_allocatable: int,
    cpu_used: int,
    memory_used: int,
    at: float,
) -> NodeLevel:
    """`previous` with one more sample taken at `at` (Unix seconds)."""
    cpu, memory = share(cpu_used, cpu_allocatable), share(memory_used, memory_allocatable)
    if previous is None:
        n = len(WINDOWS)
        return NodeLevel(
            name,
            cpu_allocatable,
            memory_allocatable,
            (cpu,) * n,
            (memory,) * n,
            at,
            cpu,
            memory,
            first_at=at,
        )
    dt = at - previous.metrics_at
    if dt <= 0:
        return previous
    moves = [1.0 - math.exp(-dt / seconds) for _, seconds in WINDOWS]
    return NodeLevel(
        name,
        cpu_allocatable,
        memory_allocatable,
        tuple(old + k * (cpu - old) for old, k in zip(previous.cpu, moves, strict=True)),
        tuple(old + k * (memory - old) for old, k in zip(previous.memory, moves, strict=True)),
        at,
        cpu,
        memory,
        first_at=previous.first_at,
    )


def combined(levels: Levels, weights: tuple[float, ...]) -> float:
    """The windows' levels weighted by `weights` (their sum need not be 1)."""
    total = sum(weights)
    if total <= 0:
        return levels[0]
    return sum(w * x for w, x in zip(weights, levels, strict=True)) / total
