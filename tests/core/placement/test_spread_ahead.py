"""What a pod does to the cluster's spread over the hours ahead (app.core.placement.spread_ahead):
the shortcut through each hour's extremes equals placing the pod and measuring, for nodes the
table knows and for one it does not; and the table's blend ranks the node that lifts the low
water first."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.placement.spread_ahead import extremes, gains, spread_costs
from app.core.placement.table import LevelTable, PlacementOptions
from app.core.placement.windows import NodeLevel

GI = 1 << 30
level = st.floats(0, 1.5, allow_nan=False).map(lambda x: round(x, 2))  # ties are common


@given(
    st.integers(2, 7).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(level, min_size=3, max_size=3), min_size=n, max_size=n),
            st.lists(st.floats(0, 0.5, allow_nan=False), min_size=n + 1, max_size=n + 1),
            st.lists(level, min_size=3, max_size=3),
        )
    )
)
def test_the_costs_are_the_spread_measured_with_the_pod_placed(case: tuple) -> None:  # type: ignore[type-arg]
    rows, pods, outsider = case
    levels = np.array(rows, dtype=float)
    n = len(levels)
    own = np.vstack([levels, np.array(outsider, dtype=float)])  # the last: a node not known
    with_pod = own + np.array(pods)[:, None]
    known = np.array([True] * n + [False])
    got = spread_costs(extremes(levels), own, with_pod, known)
    for j in range(n + 1):
        placed = np.vstack([levels, with_pod[j : j + 1]]) if j == n else levels.copy()
        if j < n:
            placed[j] = with_pod[j]
        want = float((placed.max(axis=0) - placed.min(axis=0)).mean())
        assert abs(got[j] - want) < 1e-9, (j, got[j], want)


def test_gains_rank_the_least_costly_first() -> None:
    assert gains(np.array([0.3, 0.1, 0.2])).tolist() == pytest.approx([0.0, 1.0, 0.5])
    assert gains(np.array([0.2, 0.2])).tolist() == [1.0, 1.0]


def node(name: str, now: float, ahead: tuple[float, ...]) -> NodeLevel:
    return NodeLevel(
        name, 4000, 16 * GI, (now,) * 3, (0.3,) * 3, 0.0, now, 0.3, ahead, (0.3,) * len(ahead)
    )


def test_the_pod_goes_where_it_lifts_the_low_water_of_the_hours_ahead() -> None:
    """Now all three nodes are at 0.5; in the next hours `dips` falls to 0.2 while `steady`
    stays and `peaks` rises to 0.8. The windows alone cannot tell them apart; the spread
    ahead puts the pod on `dips` (it lifts the lowest level), never on `peaks`."""
    nodes = [
        node("dips", 0.5, (0.5, 0.2, 0.2)),
        node("steady", 0.5, (0.5, 0.5, 0.5)),
        node("peaks", 0.5, (0.5, 0.8, 0.8)),
    ]
    names = ["dips", "steady", "peaks"]
    table = LevelTable(nodes, PlacementOptions())
    dips, steady, peaks = table.scores(names, (800, GI))
    assert dips == 10 and peaks == 0 and dips > steady > peaks
    spread_only = LevelTable(nodes, PlacementOptions(ahead_weight=0.0))  # the hours still read
    assert spread_only.hours == 3 and spread_only.scores(names, (800, GI))[::2] == [10, 0]
    off = LevelTable(nodes, PlacementOptions(spread_weight=0.0, ahead_weight=0.0))
    assert off.scores(names, (800, GI)) == [10, 10, 10]
    alone = LevelTable([dataclasses.replace(nodes[0])], PlacementOptions())
    assert alone.scores(["dips"], (800, GI)) == [10]  # one node: no spread to weigh
