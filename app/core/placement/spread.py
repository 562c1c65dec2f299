"""How far apart the nodes' levels are at one time: a point of the cluster's spread over time.

From each node's newest sample (its level now; the 15-minute window when no sample is recorded):
max - min and the standard deviation over the nodes, per resource, and the hottest node's CPU
level. The leader records one point every few minutes (app.store.node_spread), and the Nodes page
charts them: the figure water-level placement exists to bring down (docs/placement.md).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from app.core.placement.windows import NodeLevel


@dataclass(frozen=True, slots=True)
class SpreadPoint:
    nodes: int
    cpu_spread: float  # max - min of the nodes' CPU levels (fractions of allocatable)
    cpu_deviation: float  # their population standard deviation
    memory_spread: float
    memory_deviation: float
    cpu_hottest: float  # the highest node's CPU level


def spread_point(levels: Iterable[NodeLevel]) -> SpreadPoint | None:
    """None without any node."""
    cpu, memory = [], []
    for n in levels:
        cpu.append(n.cpu_now if n.cpu_now is not None else n.cpu[0])
        memory.append(n.memory_now if n.memory_now is not None else n.memory[0])
    if not cpu:
        return None
    return SpreadPoint(
        len(cpu),
        max(cpu) - min(cpu),
        statistics.pstdev(cpu),
        max(memory) - min(memory),
        statistics.pstdev(memory),
        max(cpu),
    )
