"""The clairvoyant placement of benchmarks/water_level.py: how far placement alone can go.

It knows what no scheduler can: every pod's CPU usage at every future minute (the benchmark's
own usage functions). At each placement it considers the nodes the pod's requests fit on (as the
default scheduler filters) and picks the one that minimises the mean CPU spread (the most used
node's level minus the least used one's, every minute) over the next H hours (`horizon_steps`;
0: until the pod's next rollout), counting every pod where it stands now with its future usage,
as if none moved again. With `memory_weight` > 0 the memory spread (constant: a pod's memory use
has no daily pattern here), times that weight, is added to what it minimises. Ties go to the
smallest sum of squared node CPU levels over that time (a pod that moves neither extreme still
evens out the rest), then to the default scheduler's score, then to the first node.

It is greedy, so it is **not a lower bound** of the spread placement can reach: each choice is
the best given the pods placed so far, counting neither the pods placed after it (the rest of a
rollout, the next rollouts) nor what a different order of choices would allow; and it weighs the
mean spread over its horizon, not the 95th percentile the target is set on. What it shows is
what placement reaches, pod by pod, with perfect knowledge of usage: where it holds a spread, a
scheduler that acts only at placement can hold it too given good enough predictions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np


class Usage(Protocol):
    def usage(self, t: float) -> tuple[float, float]: ...


def choose(
    cpu: np.ndarray,
    usage: np.ndarray,
    candidates: Sequence[int],
    tiebreak: Sequence[float],
    memory: np.ndarray | None = None,
    pod_memory: float = 0.0,
    memory_weight: float = 0.0,
) -> int:
    """The index in `candidates` (rows of `cpu`: nodes x minutes, CPU levels over the weighed
    time) whose row, with `usage` (the pod's CPU level per minute) added, leaves the smallest mean
    spread over the columns, plus `memory_weight` x the memory spread with `pod_memory` added to
    that node of `memory` (one level per node); ties to the smallest sum of squared CPU levels,
    then the highest `tiebreak` (the default scheduler's score of each candidate), then the
    first."""
    best, best_key = 0, None
    for k, row in enumerate(candidates):
        cost = 0.0
        if cpu.shape[1]:
            with_pod = cpu.copy()
            with_pod[row] += usage
            cost = float(np.mean(with_pod.max(axis=0) - with_pod.min(axis=0)))
        if memory is not None and memory_weight:
            mem = memory.copy()
            mem[row] += pod_memory
            cost += memory_weight * float(mem.max() - mem.min())
        square = float(np.dot(cpu[row], usage))  # what the sum of squares gains, less u.u
        key = (round(cost, 12), round(square, 9), -tiebreak[k], k)
        if best_key is None or key < best_key:
            best, best_key = k, key
    return best


class Future:
    """Every node's CPU level at every minute of the run, from the pods where they stand, and
    its memory level."""

    def __init__(
        self,
        nodes: Sequence[str],
        cpu_allocatable: int,
        memory_allocatable: int,
        steps: int,
        step: float,
        rollouts: Mapping[str, Sequence[int]],
        horizon_steps: int = 0,
        memory_weight: float = 0.0,
    ) -> None:
        self.row = {n: i for i, n in enumerate(nodes)}
        self.step, self.cpu_allocatable = step, cpu_allocatable
        self.memory_allocatable = memory_allocatable
        self.cpu = np.zeros((len(nodes), steps + 1))
        self.memory = np.zeros(len(nodes))
        self.times = np.arange(steps + 1) * step
        self.rollouts = {name: sorted(at) for name, at in rollouts.items()}
        self.horizon_steps, self.memory_weight = horizon_steps, memory_weight
        self._series: dict[str, tuple[np.ndarray, float]] = {}

    def series(self, name: str, workload: Usage) -> tuple[np.ndarray, float]:
        """A pod of the workload: its CPU level at every minute, its memory level."""
        out = self._series.get(name)
        if out is None:
            usage = [workload.usage(float(t)) for t in self.times]
            out = (
                np.array([c for c, _ in usage]) / self.cpu_allocatable,
                usage[0][1] / self.memory_allocatable,
            )
            self._series[name] = out
        return out

    def weighed(self, name: str, t: float) -> tuple[int, int]:
        """The columns [start, end) weighed for a pod of `name` placed at `t`: the next
        `horizon_steps`, or (0) until the workload's first rollout after `t`."""
        start = round(t / self.step)
        if self.horizon_steps:
            return start, min(start + self.horizon_steps, self.cpu.shape[1])
        end = next((i for i in self.rollouts.get(name, ()) if i > start), self.cpu.shape[1])
        return start, end

    def pick(
        self, name: str, workload: Usage, t: float, fits: Sequence[str], score: Mapping[str, float]
    ) -> str:
        start, end = self.weighed(name, t)
        rows = [self.row[n] for n in fits]
        cpu, memory = self.series(name, workload)
        k = choose(
            self.cpu[:, start:end],
            cpu[start:end],
            rows,
            [score[n] for n in fits],
            self.memory,
            memory,
            self.memory_weight,
        )
        self.cpu[rows[k], start:] += cpu[start:]
        self.memory[rows[k]] += memory
        return fits[k]

    def gone(self, name: str, node: str, t: float) -> None:
        """A pod of `name` deleted from `node` at `t` (its rollout)."""
        start = round(t / self.step)
        cpu, memory = self._series[name]
        self.cpu[self.row[node], start:] -= cpu[start:]
        self.memory[self.row[node]] -= memory
