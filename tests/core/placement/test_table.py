"""The extender's table: scores per node name, the filter, pod levels, the dashboard's view."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.placement.current import current_scores
from app.core.placement.pod_level import pod_level
from app.core.placement.score import ideal_level, window_score
from app.core.placement.table import LevelTable, PlacementOptions
from app.core.placement.windows import NodeLevel
from app.core.recommendation import Recommendation
from app.core.resources import Resources

GI = 1 << 30


def node(name: str, cpu: float, memory: float, alloc: int = 4000) -> NodeLevel:
    return NodeLevel(name, alloc, 16 * GI, (cpu,) * 3, (memory,) * 3, 0.0)


NODES = [node("low", 0.1, 0.1), node("mid", 0.4, 0.4), node("high", 0.7, 0.7)]


def test_the_emptiest_node_scores_highest() -> None:
    table = LevelTable(NODES, PlacementOptions())
    low, mid, high = table.scores(["low", "mid", "high"], (400, GI))
    assert low > mid > high
    assert high >= 0 and low <= 10


def test_a_node_without_metrics_scores_as_the_emptiest_known_node() -> None:
    """Failed before: a new node (no metrics yet, so not in the table) scored 0, below every
    node with metrics, and the pods went away from the one node sure to be nearly empty."""
    table = LevelTable(NODES, PlacementOptions())
    new, low, mid, high = table.scores(["new", "low", "mid", "high"], (400, GI))
    assert new == low > mid > high
    assert table.too_full(["nope"], (100_000, 100 * GI)) == [False]  # never filtered out
    assert table.scores([], (1, 1)) == [] and table.too_full([], (1, 1)) == []
    assert LevelTable([], PlacementOptions()).scores(["a", "b"], (1, 1)) == [0, 0]  # neutral


def test_a_node_without_metrics_takes_its_hot_spots() -> None:
    """Pods bound to the new node since it joined count on it (at the median allocatable),
    so a burst does not all go to it before its first metrics."""
    table = LevelTable(NODES, PlacementOptions())
    new, low = table.scores(["new", "low"], (400, GI), hot={"new": (1000, 2 * GI)})
    assert low > new


def test_hot_spots_move_the_next_pod_elsewhere() -> None:
    table = LevelTable([node("a", 0.1, 0.1), node("b", 0.12, 0.1)], PlacementOptions())
    assert table.scores(["a", "b"], (400, GI)) >= table.scores(["b", "a"], (400, GI))[::-1]
    a, b = table.scores(["a", "b"], (400, GI), hot={"a": (2000, 4 * GI)})
    assert b > a


def test_filter_threshold() -> None:
    table = LevelTable(NODES, PlacementOptions(filter_threshold=0.9))
    # 0.7 + 1000/4000 = 0.95 on "high": over 90%; "mid" at 0.65 is not
    assert table.too_full(["low", "mid", "high"], (1000, 0)) == [False, False, True]
    assert table.too_full(["mid"], (0, 0), hot={"mid": (0, 9 * GI)}) == [True]  # memory
    off = LevelTable(NODES, PlacementOptions(filter_threshold=0.0))
    assert off.too_full(["high"], (100_000, 0)) == [False]


def test_options_checked() -> None:
    with pytest.raises(ValueError, match="window_weights"):
        PlacementOptions(window_weights=(1.0, 1.0))
    with pytest.raises(ValueError, match="window_weights"):
        PlacementOptions(window_weights=(0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="min_weight"):
        PlacementOptions(min_weight=-1)


def rec(cpu: int, memory: int) -> Recommendation:
    r = Resources(cpu, memory)
    return Recommendation(r, r, r, r)


def test_pod_level_from_recommendations_else_requests_never_limits() -> None:
    spec = {
        "containers": [
            {"name": "app", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}},
            {"name": "log", "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "8"}}},
            {"name": "bare", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
        ],
        "initContainers": [
            {"name": "setup", "resources": {"requests": {"cpu": "4"}}},  # runs before: not added
            {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "50m"}}},
        ],
    }
    assert pod_level(spec, {}) == (2150, 4 * GI)
    assert pod_level(spec, {"app": rec(300, GI)}) == (450, GI)


def test_current_scores_for_the_dashboard() -> None:
    now = current_scores(NODES, PlacementOptions())
    assert [n.name for n in now.nodes] == ["high", "low", "mid"]
    by = {n.name: n for n in now.nodes}
    # ideal 0.25: "low" 0.15 under it (0.85), "mid" 0.15 over it (0.8), "high" (0.4), scaled
    # to 0..10 between the best and the worst: 10, (0.8 - 0.4) / 0.45 * 10 = 8.9, 0
    assert (by["low"].score, by["mid"].score, by["high"].score) == (10, 9, 0)
    assert now.windows == ("15m", "1h", "1d")
    assert abs(now.ideal_cpu[0] - (0.4 + 0.1) / 2) < 1e-12
    assert by["mid"].cpu_level == 0.4 and not by["high"].filtered


def test_a_node_that_just_filled_is_not_taken_for_an_idle_one() -> None:
    """Failed before the windows had a floor: "busy" filled a minute ago, its 15-minute mean
    showed 6% of it, and it outscored a node at a steady 30%."""
    busy = NodeLevel("busy", 4000, 16 * GI, (0.05, 0.02, 0.001), (0.1,) * 3, 0.0, 0.8, 0.1)
    steady = NodeLevel("steady", 4000, 16 * GI, (0.3,) * 3, (0.1,) * 3, 0.0, 0.3, 0.1)
    table = LevelTable([busy, steady], PlacementOptions())
    b, s = table.scores(["busy", "steady"], (400, GI))
    assert s > b


def test_scores_spread_over_the_protocols_range() -> None:
    """Failed before the scaling: nodes 0.30 to 0.42 all scored 9 or 10."""
    nodes = [node(f"n{i}", 0.30 + 0.03 * i, 0.25) for i in range(5)]
    table = LevelTable(nodes, PlacementOptions())
    scores = table.scores([n.name for n in nodes], (200, GI))
    assert scores[0] == 10 and scores[-1] == 0
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 5
    same = LevelTable([node("a", 0.5, 0.5), node("b", 0.5, 0.5)], PlacementOptions())
    assert same.scores(["a", "b", "unknown"], (200, GI)) == [10, 10, 10]


fractions_ = st.floats(min_value=0.0, max_value=1.2, allow_nan=False)


@given(
    st.lists(st.tuples(fractions_, fractions_, fractions_, fractions_), min_size=1, max_size=8),
    st.integers(0, 8000),
    st.integers(0, 8 * GI),
    st.floats(0.0, 3.0),
)
def test_fractions_are_the_window_scores_weighted(
    nodes: list[tuple[float, float, float, float]], pod_cpu: int, pod_memory: int, w: float
) -> None:
    """The table's arithmetic (in place, six columns) against the scalar score of each window
    and resource, weighted as docs/placement.md says."""
    levels = [
        NodeLevel(f"n{i}", 4000, 16 * GI, (c1, c2, c2), (m1, m2, m1), 0.0)
        for i, (c1, c2, m1, m2) in enumerate(nodes)
    ]
    options = PlacementOptions((0.5, 0.3, 0.2), w)
    table = LevelTable(levels, options)
    rows = np.arange(len(levels))
    got = table.fractions(rows, (pod_cpu, pod_memory), {"n0": (500, GI)})
    for i, n in enumerate(levels):
        hot_cpu, hot_memory = (500 / 4000, 1 / 16) if i == 0 else (0.0, 0.0)
        want = 0.0
        for j, weight in enumerate(options.window_weights):
            ideal_cpu = ideal_level([x.cpu[j] for x in levels], w)
            ideal_memory = ideal_level([x.memory[j] for x in levels], w)
            cpu = window_score(n.cpu[j] + hot_cpu + pod_cpu / 4000, ideal_cpu)
            memory = window_score(n.memory[j] + hot_memory + pod_memory / (16 * GI), ideal_memory)
            want += weight / 2 * (cpu + memory)
        assert got[i] == pytest.approx(want, abs=1e-9)


def ahead(n: NodeLevel, cpu: tuple[float, ...], memory: tuple[float, ...] = ()) -> NodeLevel:
    return dataclasses.replace(n, cpu_ahead=cpu, memory_ahead=memory or (n.memory[0],) * len(cpu))


def test_of_two_nodes_alike_now_the_one_whose_pods_will_rise_scores_lower() -> None:
    """The levels ahead: two nodes at the same level in every window, one running pods whose
    daily profiles rise in the next hours. Without the levels ahead they tie."""
    rising = ahead(node("rising", 0.3, 0.3), (0.3, 0.5, 0.7, 0.7))
    flat = ahead(node("flat", 0.3, 0.3), (0.3, 0.3, 0.3, 0.3))
    table = LevelTable([rising, flat], PlacementOptions())
    assert table.hours == 4
    r, f = table.scores(["rising", "flat"], (400, GI))
    assert f > r
    off = LevelTable([rising, flat], PlacementOptions(ahead_weight=0.0, spread_weight=0.0))
    assert off.hours == 0
    assert off.scores(["rising", "flat"], (400, GI)) == [10, 10]


def test_a_node_without_levels_ahead_reads_its_newest_level_in_their_place() -> None:
    known = ahead(node("known", 0.3, 0.3), (0.3, 0.6))
    bare = dataclasses.replace(node("bare", 0.3, 0.3), cpu_now=0.3, memory_now=0.3)
    table = LevelTable([known, bare], PlacementOptions())
    assert table.hours == 2
    k, b = table.scores(["known", "bare"], (400, GI))
    assert b > k  # read flat at 0.3, below the known node's rise
    shorter = ahead(node("short", 0.3, 0.3), (0.3,))
    assert LevelTable([known, shorter], PlacementOptions()).hours == 1  # the hours all share


def test_the_filter_reads_the_memory_column_past_the_levels_ahead() -> None:
    """With levels ahead the memory columns start after the CPU ones ahead: the filter must
    read memory's shortest window there, not a CPU slot."""
    full = ahead(node("full", 0.1, 0.95), (0.1, 0.1, 0.1))
    ok = ahead(node("ok", 0.1, 0.2), (0.1, 0.1, 0.1))
    table = LevelTable([full, ok], PlacementOptions())
    assert table.too_full(["full", "ok"], (0, 0)) == [True, False]


def test_ahead_weight_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="ahead_weight"):
        PlacementOptions(ahead_weight=-1.0)
    with pytest.raises(ValueError, match="ahead_weight"):
        PlacementOptions(ahead_weight=float("nan"))
