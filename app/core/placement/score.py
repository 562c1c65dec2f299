"""The score of a node for a pod in one window, and the level the cluster should be at.

The shape is TargetLoadPacking's (kubernetes-sigs/scheduler-plugins,
pkg/trimaran/targetloadpacking): the score rises while the node's level with the pod, `t`, is
below the target and falls beyond it. Its formula, on a 0-100 scale with target `X`:

    t <= X:  (100 - X) * t / X + X
    t >  X:  X * (100 - t) / (100 - X),   0 above 100

The defect: the constant `X` that both branches meet is not where they meet. Below the target
the score climbs from X to 100; just past it, it starts again from X. The score falls by
100 - X the moment a node passes the target, so a node far below the target outscores one just
past it although the second is much closer: with X = 50, a node at t = 1 scores 51 and one at
t = 50.5 (half a point over) scores 49.5; an empty node (50) beats it too. Packing wants
exactly the reverse of that jump.

Here both branches meet at the maximum, 1, at `t = ideal`, and the score is continuous:

    t <= ideal:          1 - (ideal - t)
    ideal < t < 1:       (1 - t) / (1 - ideal)
    t >= 1:              0

Below the ideal a node loses one point per unit of level it lacks; above it the score falls to 0
at 100%, at least as steeply (1 / (1 - ideal) >= 1): a node over the ideal loses more than one
as far under it, since overload costs latency and evictions while an idle node costs only money.
"""

from __future__ import annotations

from collections.abc import Iterable


def window_score(t: float, ideal: float) -> float:
    """In [0, 1]: 1 at `t == ideal`, monotone on each side of it, 0 from `t >= 1`."""
    if t >= 1.0:
        return 0.0
    if t <= ideal:
        return max(0.0, 1.0 - (ideal - t))
    return (1.0 - t) / (1.0 - ideal)


def ideal_level(levels: Iterable[float], min_weight: float) -> float:
    """`(cluster mean + min node level * w) / (1 + w)`: the level the nodes should be at.

    It follows the cluster: the mean alone (w = 0) would let a pod go to any node below it; the
    minimum pulls the ideal down towards the emptiest node, so that it fills first. 0 when no
    level is known; capped below 1 (a cluster all over 100% still ranks its nodes)."""
    values = list(levels)
    if not values:
        return 0.0
    w = max(0.0, min_weight)
    ideal = (sum(values) / len(values) + min(values) * w) / (1.0 + w)
    return min(max(ideal, 0.0), 0.99)
