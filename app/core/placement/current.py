"""The extender's current view of the nodes, for people: each node's levels and the score it would
give now. This is the function the dashboard calls (`current_scores`), with the levels the leader
saved (app.store.node_levels.load_node_levels) and the placement settings.

The score shown is the one `prioritize` answers for a pod predicted to use nothing: how the
extender ranks the nodes before a pod's own size is added to each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from app.core.placement.table import MAX_PRIORITY, LevelTable, PlacementOptions
from app.core.placement.windows import WINDOWS, Levels, NodeLevel, combined
from app.core.sizing.node_fit import Amounts


@dataclass(frozen=True, slots=True)
class NodeScore:
    name: str
    cpu: Levels  # used / allocatable per window (WINDOWS), none below the newest sample
    memory: Levels
    cpu_level: float  # the windows combined with the settings' weights
    memory_level: float
    score: int  # 0..MAX_PRIORITY, as `prioritize` would answer for an empty pod
    filtered: bool  # `filter` would leave the node out even for an empty pod
    # the levels in each of the next hours the extender scores (its pods' daily profiles; a
    # node without them at its newest level); empty when no node has them
    cpu_ahead: Levels = ()
    memory_ahead: Levels = ()


@dataclass(frozen=True, slots=True)
class CurrentScores:
    windows: tuple[str, ...]
    ideal_cpu: Levels  # per window
    ideal_memory: Levels
    nodes: tuple[NodeScore, ...]  # by name
    hours: int = 0  # the hours ahead the extender scores (0: none)


def current_scores(
    levels: Iterable[NodeLevel],
    options: PlacementOptions,
    hot: Mapping[str, Amounts] | None = None,
) -> CurrentScores:
    """Every node of `levels` with allocatable, by name."""
    table = LevelTable(levels, options)
    names = sorted(table.levels)
    scores = table.scores(names, (0, 0), hot)
    full = table.too_full(names, (0, 0), hot)
    weights = options.window_weights
    cpu_ahead, memory_ahead = table.ahead()
    nodes = tuple(
        NodeScore(
            name,
            *table.levels[name].effective(),
            combined(table.levels[name].effective()[0], weights),
            combined(table.levels[name].effective()[1], weights),
            score,
            filtered,
            cpu_ahead.get(name, ()),
            memory_ahead.get(name, ()),
        )
        for name, score, filtered in zip(names, scores, full, strict=True)
    )
    return CurrentScores(
        tuple(w for w, _ in WINDOWS),
        tuple(float(x) for x in np.asarray(table.ideal_cpu)),
        tuple(float(x) for x in np.asarray(table.ideal_memory)),
        nodes,
        table.hours,
    )


__all__ = ["MAX_PRIORITY", "CurrentScores", "NodeScore", "current_scores"]
