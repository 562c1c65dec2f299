"""The nodes' levels laid out for the scheduler extender: scores for thousands of nodes per call.

kube-scheduler calls `prioritize` for every pod with every feasible node's name (5,000 in a large
cluster) and waits for the answer. So the levels are loaded into arrays once per reload
(`LevelTable.build`), with each window's ideal level, and a call only looks the names up and
scores them all at once with numpy: well under a millisecond of arithmetic for 5,000 nodes, where
a Python loop over them took 40 ms on a 2-core machine.

A node the table does not know (no metrics yet: usually a node that just joined) is estimated at
the level of the emptiest node it knows, per window and resource, with the median allocatable of
the nodes it knows (for the pod's and its hot spots' share of it), and is never filtered out. A
new node runs little more than its DaemonSets' pods, so scoring it 0, as this did, sent pods away
from the one node sure to be nearly empty; an estimate below every measured node would instead
send it a whole burst before its first metrics. At the emptiest node's level it competes with
that node, and each pod bound to it counts as a hot spot on it until its metrics arrive. With no
node known at all, every node scores 0 (neutral).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np
import numpy.typing as npt

from app.core.placement.score import ideal_level
from app.core.placement.spread_ahead import Extremes, extremes, gains, spread_costs
from app.core.placement.windows import WINDOWS, Levels, NodeLevel
from app.core.sizing.node_fit import Amounts

MAX_PRIORITY = 10  # k8s.io/kube-scheduler/extender/v1 MaxExtenderPriority
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PlacementOptions:
    window_weights: tuple[float, ...] = (0.5, 0.3, 0.2)  # 15m, 1h, 1d
    min_weight: float = 1.0  # `w` of the ideal level
    filter_threshold: float = 0.9  # a level past it filters the node out; 0 turns it off
    # the levels ahead (app.core.placement.profile), against the windows' weights' sum; counted
    # only when some node has levels ahead
    ahead_weight: float = 1.0
    # the share of a node's score that is what the pod does to the cluster's spread over the
    # hours ahead (app.core.placement.spread_ahead), when there are levels ahead; and how much
    # the memory spread counts in it against the CPU spread
    spread_weight: float = 0.8
    spread_memory_weight: float = 0.3

    def __post_init__(self) -> None:
        if len(self.window_weights) != len(WINDOWS):
            raise ValueError(f"window_weights: {len(WINDOWS)} weights, one per window")
        if any(w < 0 for w in self.window_weights) or sum(self.window_weights) <= 0:
            raise ValueError("window_weights: not negative, and not all 0")
        if not self.ahead_weight >= 0:  # NaN too
            raise ValueError("ahead_weight: not negative")
        if not 0 <= self.spread_weight <= 1:
            raise ValueError("spread_weight: a fraction")
        if not self.spread_memory_weight >= 0:
            raise ValueError("spread_memory_weight: not negative")
        if self.min_weight < 0:
            raise ValueError("min_weight: not negative")
        if not self.filter_threshold >= 0:  # NaN too
            raise ValueError("filter_threshold: a fraction, 0 to turn the filter off")


def _shared_hours(levels: Sequence[NodeLevel]) -> int:
    """The hours ahead that every node having levels ahead has (0: no node has them)."""
    lengths = [min(len(n.cpu_ahead), len(n.memory_ahead)) for n in levels if _has_ahead(n)]
    return min(lengths) if lengths else 0


def _has_ahead(n: NodeLevel) -> bool:
    return bool(n.cpu_ahead) and bool(n.memory_ahead)


def _ahead(levels: Sequence[NodeLevel], now: Floats, hours: int, cpu: bool) -> Floats:
    """(nodes x hours) levels ahead; a node without them at `now` (its shortest window's)."""
    out = np.repeat(now[:, None], hours, axis=1) if hours else np.zeros((len(levels), 0))
    for i, n in enumerate(levels):
        ahead = n.cpu_ahead if cpu else n.memory_ahead
        if hours and _has_ahead(n):
            out[i] = ahead[:hours]
    return out


def window_scores(t: Floats, ideal: Floats) -> Floats:
    """app.core.placement.score.window_score over arrays (`ideal` broadcast along `t`)."""
    return scores_in_place(np.array(t, dtype=np.float64), 1.0 - ideal, 1.0 / (1.0 - ideal))


def scores_in_place(t: Floats, under: Floats, over: Floats) -> Floats:
    """`window_scores` in `t` itself, with `under = 1 - ideal` and `over = 1 / (1 - ideal)`.

    Below the ideal `t + (1 - ideal)` is at most 1 and `(1 - t) / (1 - ideal)` at least 1;
    above it the reverse. So the score is the smaller of the two, and 0 from `t >= 1`, where
    the second is not positive: one temporary array, no branch per element."""
    falling = np.subtract(1.0, t)
    falling *= over
    t += under
    np.minimum(t, falling, out=t)
    np.maximum(t, 0.0, out=t)
    return t


class LevelTable:
    """Immutable once built: readers on any thread share it.

    Laid out for a call's arithmetic: one row per node, a block of columns per resource (CPU,
    then memory), each the three windows and then the hours ahead (none when no node has levels
    ahead; each hour weighs `ahead_weight / hours`), the levels and the inverse of the
    allocatable each column's pod and hot spots are divided by; per column the ideal,
    `1 - ideal` and `1 / (1 - ideal)`. A call gathers its nodes' rows (`take`) and scores them
    in place: three arrays of its size, no other temporaries (benchmarks/water_level.py
    measures it)."""

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
        # the levels ahead: as many hours as every node that has them shares; a node without
        # them reads its newest level in each (flat: nothing known of its next hours)
        scored = options.ahead_weight > 0 or options.spread_weight > 0
        self.hours = _shared_hours(known) if scored else 0
        cpu_ahead = _ahead(known, self.cpu[:, 0], self.hours, cpu=True)
        memory_ahead = _ahead(known, self.memory[:, 0], self.hours, cpu=False)
        n = len(WINDOWS) + self.hours  # the columns per resource
        self.block = n
        weights = list(options.window_weights)
        if self.hours:
            weights += [options.ahead_weight / self.hours] * self.hours
        w = np.array(weights, dtype=np.float64)
        self.weights = w / w.sum() / 2.0  # two resources, each half the score
        self._levels: Floats = np.hstack([self.cpu, cpu_ahead, self.memory, memory_ahead])
        self._per_unit: Floats = np.hstack(
            [
                np.repeat(1.0 / self.cpu_allocatable[:, None], n, axis=1),
                np.repeat(1.0 / self.memory_allocatable[:, None], n, axis=1),
            ]
        ).reshape(len(known), 2 * n)
        ideal = np.array(
            [ideal_level(self._levels[:, j], options.min_weight) for j in range(2 * n)]
        )
        self._under: Floats = 1.0 - ideal  # score below the ideal: t + (1 - ideal)
        self._over: Floats = 1.0 / (1.0 - ideal)  # above it: (1 - t) / (1 - ideal)
        self._weights: Floats = np.concatenate([self.weights, self.weights])
        # the hour columns of each resource, with its weight in the spread's cost, and their
        # extremes over the nodes (app.core.placement.spread_ahead): none without two nodes
        first = len(WINDOWS)
        self._hour_blocks: list[tuple[slice, float]] = []
        if self.hours and len(known) >= 2 and options.spread_weight > 0:
            self._hour_blocks = [
                (slice(start, start + self.hours), weight)
                for start, weight in ((first, 1.0), (n + first, options.spread_memory_weight))
                if weight > 0
            ]
        self._extremes: list[Extremes] = [
            extremes(self._levels[:, hours]) for hours, _ in self._hour_blocks
        ]
        # one more row, the estimate for any node not in the table (see the module docstring)
        self._estimate = len(known)
        if known:
            self._levels = np.vstack([self._levels, self._levels.min(axis=0)])
            median = (
                float(np.median(self.cpu_allocatable)),
                float(np.median(self.memory_allocatable)),
            )
            self._per_unit = np.vstack([self._per_unit, 1.0 / self._pod_columns(median)])

    def __len__(self) -> int:
        return len(self.index)

    def ahead(self) -> tuple[dict[str, Levels], dict[str, Levels]]:
        """Each node's CPU and memory levels in the hours ahead as scored (a node without
        levels ahead at its newest level); empty without hours ahead."""
        if not self.hours:
            return {}, {}
        w, n = len(WINDOWS), self.block
        cpu = {name: tuple(self._levels[i, w:n].tolist()) for name, i in self.index.items()}
        memory = {name: tuple(self._levels[i, n + w :].tolist()) for name, i in self.index.items()}
        return cpu, memory

    def _rows(self, names: Sequence[str]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
        """Each name's row, the estimate's for a node not in the table; which are in it."""
        # map() over dict.get runs in C: a generator here took most of a 5,000-name call
        rows = np.fromiter(
            map(self.index.get, names, repeat(self._estimate, len(names))),
            dtype=np.intp,
            count=len(names),
        )
        return rows, rows < self._estimate

    def _pod_columns(self, pod: tuple[float, float]) -> Floats:
        """The pod's predicted usage in every column, the hours ahead included."""
        n = self.block
        return np.array((float(pod[0]),) * n + (float(pod[1]),) * n)

    def _base(self, hot: Mapping[str, Amounts]) -> Floats:
        """The columns' levels with the hot spots added (as levels of each node)."""
        if not hot:
            return self._levels
        extra = np.zeros(self._levels.shape)
        n = self.block
        for node, (c, m) in hot.items():
            i = self.index.get(node)
            if i is not None:
                extra[i, :n] = c
                extra[i, n:] = m
        extra *= self._per_unit
        extra += self._levels
        return extra

    def _predicted(
        self,
        rows: npt.NDArray[np.intp],
        pod: Amounts,
        hot: Mapping[str, Amounts],
        names: Sequence[str] = (),
    ) -> Floats:
        """Each row's levels with its hot spots and the pod: `t` of the window score.
        `names`: the rows' names, for the hot spots of nodes on the estimate's row."""
        t = self._base(hot).take(rows, axis=0)
        add = self._per_unit.take(rows, axis=0)
        add *= self._pod_columns(pod)
        t += add
        if hot and names:
            for i in np.flatnonzero(rows == self._estimate).tolist():
                extra = hot.get(names[i])
                if extra is not None:
                    t[i] += self._pod_columns(extra) * self._per_unit[self._estimate]
        return t

    def scores(
        self, names: Sequence[str], pod: Amounts, hot: Mapping[str, Amounts] | None = None
    ) -> list[int]:
        """0..MAX_PRIORITY per name, in order; a node not in the table at the estimate.

        The scores are spread over the protocol's whole range for the nodes of the call: the
        best scores MAX_PRIORITY, the worst 0, the others in proportion (all MAX_PRIORITY when
        they are equal). The protocol allows 11 integer scores; unscaled, the nodes of a cluster
        whose levels differ by 20 points of CPU fell on two or three of them, and the request-based
        scores decided between the rest (benchmarks/water_level.py). The order is the fractions'
        (`fractions`): scaling keeps every property of the window score."""
        if not self.index or not names:
            return [0] * len(names)
        rows, _ = self._rows(names)
        fractions = self.fractions(rows, pod, hot or {}, names)
        low, high = float(fractions.min()), float(fractions.max())
        if high - low > 1e-9:
            fractions -= low
            fractions *= MAX_PRIORITY / (high - low)
            scaled = np.rint(fractions).astype(np.int64)
        else:
            scaled = np.full(len(fractions), MAX_PRIORITY, dtype=np.int64)
        scores: list[int] = scaled.tolist()  # Python ints already
        return scores

    def fractions(
        self,
        rows: npt.NDArray[np.intp],
        pod: Amounts,
        hot: Mapping[str, Amounts],
        names: Sequence[str] = (),
    ) -> Floats:
        """Each row's score in [0, 1]: every window's score for CPU and memory, weighted; with
        levels ahead, blended with what the pod does to the cluster's spread over them
        (`spread_weight` of it)."""
        t = self._predicted(rows, pod, hot, names)
        spread = self._spread_gains(rows, t, hot)
        scores_in_place(t, self._under, self._over)
        result: Floats = t @ self._weights
        if spread is not None:
            share = self.options.spread_weight
            result *= 1.0 - share
            result += share * spread
        return result

    def _spread_gains(
        self, rows: npt.NDArray[np.intp], t: Floats, hot: Mapping[str, Amounts]
    ) -> Floats | None:
        """Per row, how little the pod adds to the cluster's spread over the hours ahead, in
        [0, 1] over the call (app.core.placement.spread_ahead); None without hours ahead, two
        known nodes or a spread weight."""
        if not self._hour_blocks or self.options.spread_weight <= 0:
            return None
        base = self._base(hot)
        own = base.take(rows, axis=0)
        known = rows < self._estimate
        cost = np.zeros(len(rows))
        for (hours, weight), ends in zip(self._hour_blocks, self._extremes, strict=True):
            if hot:  # the hot spots move the levels: their extremes found anew
                ends = extremes(base[: self._estimate, hours])
            cost += weight * spread_costs(ends, own[:, hours], t[:, hours], known)
        return gains(cost)

    def too_full(
        self, names: Sequence[str], pod: Amounts, hot: Mapping[str, Amounts] | None = None
    ) -> list[bool]:
        """Per name: the node's level in the shortest window, with its hot spots and the pod,
        passes the filter threshold in CPU or memory. Unknown nodes, or no threshold: False."""
        threshold = self.options.filter_threshold
        rows, known = self._rows(names)
        out = np.zeros(len(names), dtype=bool)
        if threshold > 0 and known.any():
            shortest = np.array([0, self.block], dtype=np.intp)  # the 15-minute columns alone
            at = np.ix_(rows[known], shortest)
            t = self._base(hot or {})[at]
            t += self._per_unit[at] * self._pod_columns(pod)[shortest]
            out[known] = (t[:, 0] > threshold) | (t[:, 1] > threshold)
        full: list[bool] = out.tolist()  # Python bools already
        return full
