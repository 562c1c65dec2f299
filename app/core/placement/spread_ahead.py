"""What placing a pod on each node does to the cluster's spread over the hours ahead.

The windows' score (app.core.placement.score) ranks each node by its own level against the
cluster's ideal; it does not see the cluster's spread, the figure water-level placement is for
(the most used node's level minus the least used one's). With the nodes' levels ahead
(app.core.placement.ahead) the extender can count it directly: for each candidate node and each
hour ahead, the spread the cluster would have with the pod on that node, every other node as
predicted; the candidate's cost is the mean over the hours. It only moves when the pod would
make its node the most used one at some hour (a cost) or lift the least used one (a gain), so
a pod goes where it raises the low water, not where it tops the high.

Computed from each hour's highest and two lowest levels, found once per table (and again in a
call only when hot spots change the levels): O(candidates x hours) a call.
`benchmarks/water_level.py` measures what it does to the spread (docs/placement.md).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


Extremes = tuple[Floats, Floats, Floats]  # per hour: the highest, lowest and second lowest level


def extremes(levels: Floats) -> Extremes:
    """Per hour (column) of `levels` (nodes x hours, at least two nodes): the highest level, the
    lowest and the second lowest."""
    lows = np.partition(levels, 1, axis=0)
    return levels.max(axis=0), lows[0], lows[1]


def spread_costs(
    ends: Extremes, own: Floats, with_pod: Floats, known: npt.NDArray[np.bool_]
) -> Floats:
    """Per candidate, the mean over the hours of the cluster's spread with the pod on it.

    `ends`: the known nodes' `extremes`; `own`: each candidate's level per hour without the
    pod, `with_pod` with it (candidates x hours; never below `own`); `known`: whether each
    candidate is one of the known nodes (a node the table does not know is counted beside them).

    The pod only raises its node, so the highest level with it is the higher of the cluster's
    highest and the node's new level (where the node was the highest, its new level is higher
    than the second highest too). The lowest moves only where the node was the lowest: then it
    is the lower of the second lowest and the node's new level; elsewhere it stays (for a node
    not known, the lower of the lowest and its new level)."""
    highest, low1, low2 = ends
    hours = len(highest)
    costs: Floats = np.maximum(with_pod, highest).mean(axis=1)
    costs -= float(low1.mean())
    # where a candidate was at or below the lowest at an hour (a few candidates), the lowest
    # moves: for a known node, to the lower of its new level and the second lowest; for one not
    # known (beside the others), to the lower of its new level and the lowest
    i, k = np.nonzero(own <= low1)
    if len(i):
        floor = np.where(known[i], low2[k], low1[k])
        np.add.at(costs, i, (low1[k] - np.minimum(with_pod[i, k], floor)) / hours)
    return costs


def gains(costs: Floats) -> Floats:
    """Costs turned into scores in [0, 1] over the call's candidates: the least costly 1, the
    most 0, the others in proportion (all 1 when equal)."""
    low, high = float(costs.min()), float(costs.max())
    if high - low <= 1e-12:
        return np.ones(len(costs))
    out: Floats = (high - costs) / (high - low)
    return out
