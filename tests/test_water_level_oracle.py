"""benchmarks/water_level_oracle.py: the clairvoyant placement picks the node that minimises the
future CPU spread, on hand-made cases where the node lowest now is the wrong one."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

# The benchmarks run as scripts: their modules are top-level ones (tests/test_slack_bound.py).
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

from water_level_oracle import Future, choose  # noqa: E402

# three nodes over four minutes: node 0 idle now and busy later, node 2 the other way round
LEVELS = np.array([[0.1, 0.1, 0.5, 0.5], [0.3, 0.3, 0.3, 0.3], [0.5, 0.5, 0.1, 0.1]])


def test_the_pod_goes_where_its_peak_meets_the_nodes_trough() -> None:
    # a pod idle for two minutes, then at 0.4: mean spread 0.6 on node 0 (the lowest now),
    # 0.5 on node 1, 0.3 on node 2 (the highest now)
    usage = np.array([0.0, 0.0, 0.4, 0.4])
    assert choose(LEVELS, usage, [0, 1, 2], [0.0, 0.0, 0.0]) == 2
    # among the nodes it may go to (its requests fit) only
    assert choose(LEVELS, usage, [0, 1], [0.0, 0.0]) == 1


def test_a_pod_busy_now_goes_to_the_node_idle_now() -> None:
    usage = np.array([0.4, 0.4, 0.0, 0.0])
    assert choose(LEVELS, usage, [0, 1, 2], [0.0, 0.0, 0.0]) == 0


def test_ties_go_to_the_lower_node_then_the_default_score() -> None:
    # a pod of 0.1 on any of nodes 0-3 leaves the spread at 1.0 (node 4 at 1.0 stays the top, an
    # empty node the bottom); on node 4 it is 1.1
    levels = np.array([[0.0], [0.0], [0.3], [0.5], [1.0]])
    usage = np.array([0.1])
    assert choose(levels, usage, [0, 1, 2, 3, 4], [0, 0, 0, 0, 0]) in (0, 1)
    assert choose(levels, usage, [0, 1, 2, 3, 4], [0, 5, 9, 9, 9]) == 1
    assert choose(levels, usage, [2, 3, 4], [0, 0, 9]) == 0  # node 2: the smaller squares


def test_the_memory_spread_counts_with_its_weight() -> None:
    levels = np.array([[0.2, 0.2], [0.2, 0.2], [0.4, 0.4]])
    usage = np.array([0.1, 0.1])
    memory = np.array([0.6, 0.1, 0.3])
    # CPU alone: node 0 or 1 alike, node 0 first; with memory, node 1, the emptiest in memory
    assert choose(levels, usage, [0, 1, 2], [0, 0, 0], memory, 0.2, 0.0) == 0
    assert choose(levels, usage, [0, 1, 2], [0, 0, 0], memory, 0.2, 0.5) == 1


class Steady:
    def __init__(self, cpu: float) -> None:
        self.cpu = cpu

    def usage(self, t: float) -> tuple[float, float]:
        return (self.cpu if t >= 120 else 0.0), 100.0


def test_the_future_counts_placed_pods_until_they_are_gone() -> None:
    future = Future(["a", "b"], 1000, 1000, steps=3, step=60.0, rollouts={})
    scores = {"a": 0.0, "b": 0.0}
    assert future.pick("w", Steady(400), 0.0, ["a", "b"], scores) == "a"
    assert future.cpu.tolist() == [[0.0, 0.0, 0.4, 0.4], [0.0] * 4]
    # the next pod weighs the first one's future: it goes to b
    assert future.pick("w", Steady(400), 60.0, ["a", "b"], scores) == "b"
    future.gone("w", "a", 180.0)  # deleted at minute 3: counted until then
    assert future.cpu.tolist() == [[0.0, 0.0, 0.4, 0.0], [0.0, 0.0, 0.4, 0.4]]
    assert future.memory.tolist() == [0.0, 0.1]


def test_the_weighed_time_ends_at_the_horizon_or_the_next_rollout() -> None:
    future = Future(["a"], 1000, 1000, steps=100, step=60.0, rollouts={"w": [10, 40]})
    assert future.weighed("w", 600.0) == (10, 40)  # placed at a rollout: until the next
    assert future.weighed("w", 2460.0) == (41, 101)  # no rollout after: the run's end
    future = Future(["a"], 1000, 1000, steps=100, step=60.0, rollouts={}, horizon_steps=5)
    assert future.weighed("w", 5820.0) == (97, 101)
