"""Each node's level over the next hours, from the daily profiles of the pods it runs.

The leader's node-levels job calls `with_ahead` after folding the newest NodeMetrics: for each
node, its newest measured level (CPU and memory) plus, for every pod running on it whose workload
has a complete profile (app.core.placement.profile), the change that profile shows from the
present slot to each of the next ones; then one level per hour, the mean of its four slots (the
first hour: the present slot and the three after it). Hours, not slots: the extender scores each
as a column of its own for every node of every call, and 24 slots a resource tripled its
`prioritize` time over 5,000 nodes (benchmarks/water_level.py), where 6 hours add half. A node
none of whose pods has a profile gets no levels ahead (the extender then reads its newest level
in their place).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np

from app.core.placement.profile import SLOT_SECONDS, Floats, Profiles, node_ahead
from app.core.placement.windows import NodeLevel

SLOTS_AN_HOUR = round(3600 / SLOT_SECONDS)


def with_ahead(
    levels: Iterable[NodeLevel],
    pods: Iterable[tuple[str, str, str]],
    profiles: Profiles,
    hours: int,
) -> list[NodeLevel]:
    """`levels` with their levels ahead over `hours` hours. `pods`: (node, namespace, name) of
    each pod running on a node; a pod is found in the profiles' workload of each pod (the
    recommender's last run)."""
    out = list(levels)
    if hours <= 0 or not profiles.by_workload:
        return out
    slots = hours * SLOTS_AN_HOUR
    on_node: dict[str, list[object]] = {}
    for node, namespace, name in pods:
        w = profiles.workload_of_pod.get((namespace, name))
        if w is not None:
            on_node.setdefault(node, []).append(w)
    result = []
    for level in out:
        changes = _changes(on_node.get(level.name, ()), profiles, level.metrics_at, slots)
        if changes is None or level.cpu_now is None or level.memory_now is None:
            result.append(level)
            continue
        cpu, memory = (c.reshape(hours, SLOTS_AN_HOUR).mean(axis=1) for c in changes)
        result.append(
            dataclasses.replace(
                level,
                cpu_ahead=node_ahead(level.cpu_now, level.cpu_allocatable, [cpu]),
                memory_ahead=node_ahead(level.memory_now, level.memory_allocatable, [memory]),
            )
        )
    return result


def _changes(
    workloads: Iterable[object], profiles: Profiles, at: float, slots: int
) -> tuple[Floats, Floats] | None:
    """The sum over the pods (one workload each) of their usage ahead minus their usage now;
    None when no pod's workload has a complete profile."""
    cpu: Floats | None = None
    memory = np.zeros(slots)
    for w in workloads:
        profile = profiles.by_workload.get(w)
        ahead = profile.ahead(at, slots) if profile is not None else None
        if ahead is None:
            continue
        c, m = ahead
        if cpu is None:
            cpu = np.zeros(slots)
        cpu += c - c[0]
        memory += m - m[0]
    return None if cpu is None else (cpu, memory)
