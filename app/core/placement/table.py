"""The nodes' levels laid out for the scheduler extender: scores for thousands of nodes per call.

kube-scheduler calls `prioritize` for every pod with every feasible node's name (5,000 in a large
cluster) and waits for the answer. So the levels are loaded into arrays once per reload
(`LevelTable.build`), with each window's ideal level, and a call only looks the names up and
scores them all at once with numpy: well under a millisecond of arithmetic for 5,000 nodes, where
a Python loop over them took 40 ms on a 2-core machine.

A node the table does not know (no metrics yet, or no allocatable) scores 0 and is never filtered
out: the extender knows nothing against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np
import numpy.typing as npt

from app.core.placement.score import ideal_level
from app.core.placement.windows import WINDOWS, NodeLevel
from app.core.sizing.node_fit import Amounts

MAX_PRIORITY = 10  # k8s.io/kube-scheduler/extender/v1 MaxExtenderPriority
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PlacementOptions:
    window_weights: tuple[float, ...] = (0.5, 0.3, 0.2)  # 15m, 1h, 1d
    min_weight: float = 1.0  # `w` of the ideal level
    filter_threshold: float = 0.9  # a level past it filters the node out; 0 turns it off

    def __post_init__(self) -> None:
        if len(self.window_weights) != len(WINDOWS):
            raise ValueError(f"window_weights: {len(WINDOWS)} weights, one per window")
        if any(w < 0 for w in self.window_weights) or sum(self.window_weights) <= 0:
            raise ValueError("window_weights: not negative, and not all 0")
        if self.min_weight < 0:
            raise ValueError("min_weight: not negative")
        if not self.filter_threshold >= 0:  # NaN too
            raise ValueError("filter_threshold: a fraction, 0 to turn the filter off")


def window_scores(t: Floats, ideal: Floats) -> Floats:
    """app.core.placement.score.window_score over arrays (`ideal` broadcast along `t`)."""
    under = np.maximum(0.0, 1.0 - (ideal - t))
    over = (1.0 - t) / (1.0 - ideal)
    return np.where(t >= 1.0, 0.0, np.where(t <= ideal, under, over))


class LevelTable:
    """Immutable once built: readers on any thread share it."""

    def __init__(self, levels: Iterable[NodeLevel], options: PlacementOptions) -> None:
        known = [n for n in levels if n.cpu_allocatable > 0 and n.memory_allocatable > 0]
        self.options = options
        self.levels = {n.name: n for n in known}
        self.index = {n.name: i for i, n in enumerate(known)}
        self.cpu_allocatable = np.array([n.cpu_allocatable for n in known], dtype=np.float64)
        self.memory_allocatable = np.array([n.memory_allocatable for n in known], dtype=float)
        shape = (len(known), len(WINDOWS))
        effective = [n.effective() for n in known]  # no window below the newest sample
        self.cpu = np.array([c for c, _ in effective], dtype=np.float64).reshape(shape)
        self.memory = np.array([m for _, m in effective], dtype=np.float64).reshape(shape)
        self.ideal_cpu = np.array(
            [ideal_level(self.cpu[:, j], options.min_weight) for j in range(len(WINDOWS))]
        )
        self.ideal_memory = np.array(
            [ideal_level(self.memory[:, j], options.min_weight) for j in range(len(WINDOWS))]
        )
        weights = np.array(options.window_weights, dtype=np.float64)
        self.weights = weights / weights.sum() / 2.0  # two resources, each half the score

    def __len__(self) -> int:
        return len(self.index)

    def _rows(self, names: Sequence[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        # map() over dict.get runs in C: a generator here took most of a 5,000-name call
        found = list(map(self.index.get, names, repeat(-1, len(names))))
        rows = np.array(found, dtype=np.int64) if found else np.zeros(0, dtype=np.int64)
        return rows, rows >= 0

    def _predicted(
        self, rows: npt.NDArray[np.int64], pod: Amounts, hot: Mapping[str, Amounts]
    ) -> tuple[Floats, Floats]:
        """Each row's (CPU, memory) level to add to its windows: the pod and its hot spots."""
        cpu = pod[0] / self.cpu_allocatable[rows]
        memory = pod[1] / self.memory_allocatable[rows]
        if hot:
            extra_cpu, extra_memory = np.zeros(len(self.index)), np.zeros(len(self.index))
            for node, (c, m) in hot.items():
                i = self.index.get(node)
                if i is not None:
                    extra_cpu[i] = c / self.cpu_allocatable[i]
                    extra_memory[i] = m / self.memory_allocatable[i]
            cpu = cpu + extra_cpu[rows]
            memory = memory + extra_memory[rows]
        return cpu, memory

    def scores(
        self, names: Sequence[str], pod: Amounts, hot: Mapping[str, Amounts] | None = None
    ) -> list[int]:
        """0..MAX_PRIORITY per name, in order; 0 for a node not in the table.

        The scores are spread over the protocol's whole range for the nodes of the call: the
        best scores MAX_PRIORITY, the worst 0, the others in proportion (all MAX_PRIORITY when
        they are equal). The protocol allows 11 integer scores; unscaled, the nodes of a cluster
        whose levels differ by 20 points of CPU fell on two or three of them, and the request-based
        scores decided between the rest (benchmarks/water_level.py). The order is the fractions'
        (`fractions`): scaling keeps every property of the window score."""
        rows, known = self._rows(names)
        out = np.zeros(len(names), dtype=np.int64)
        if known.any():
            fractions = self.fractions(rows[known], pod, hot or {})
            low, high = float(fractions.min()), float(fractions.max())
            if high - low > 1e-9:
                out[known] = np.rint((fractions - low) / (high - low) * MAX_PRIORITY)
            else:
                out[known] = MAX_PRIORITY
        scores: list[int] = out.tolist()  # Python ints already
        return scores

    def fractions(
        self, rows: npt.NDArray[np.int64], pod: Amounts, hot: Mapping[str, Amounts]
    ) -> Floats:
        """Each row's score in [0, 1]: every window's score for CPU and memory, weighted."""
        cpu, memory = self._predicted(rows, pod, hot)
        s_cpu = window_scores(self.cpu[rows] + cpu[:, None], self.ideal_cpu)
        s_memory = window_scores(self.memory[rows] + memory[:, None], self.ideal_memory)
        result: Floats = (s_cpu + s_memory) @ self.weights
        return result

    def too_full(
        self, names: Sequence[str], pod: Amounts, hot: Mapping[str, Amounts] | None = None
    ) -> list[bool]:
        """Per name: the node's level in the shortest window, with its hot spots and the pod,
        passes the filter threshold in CPU or memory. Unknown nodes, or no threshold: False."""
        threshold = self.options.filter_threshold
        rows, known = self._rows(names)
        out = np.zeros(len(names), dtype=bool)
        if threshold > 0 and known.any():
            r = rows[known]
            cpu, memory = self._predicted(r, pod, hot or {})
            out[known] = (self.cpu[r, 0] + cpu > threshold) | (
                self.memory[r, 0] + memory > threshold
            )
        return [bool(b) for b in out.tolist()]
