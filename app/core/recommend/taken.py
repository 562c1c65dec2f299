"""What the model took of a batch of usage samples, in columns (no I/O).

`ArrayModel.add_usage_columns` answers which CPU and memory values of a batch it took, for each
workload container of the batch; the recommender job counts them into each container's usage
window (timeline.UsageWindows.add_taken). At 150,000 pods a batch holds a sample per pod
container, each with a CPU and a memory value: kept as columns (each value with its workload
container's index), the answer is built with a few numpy calls from the rows the model found,
not with a dict lookup and a list append per sample.
`lists` gives the same answer as one list of CPU cores and one of memory bytes per workload
container (ArrayModel.add_usages, which the tests compare sample by sample).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from app.core.workload_key import WorkloadKey

Array = Any
Key = tuple[WorkloadKey, str]  # workload, container
Taken = tuple[list[float], list[float]]  # CPU cores, memory bytes taken


@dataclass(frozen=True)
class TakenColumns:
    """Each workload container of a batch (`keys`, in the order the batch first names them,
    also those it took nothing of), and the values taken, in the batch's order: CPU cores
    (`cpu`) and memory bytes (`memory`), each with its key's index (`cpu_at`, `memory_at`)."""

    keys: list[Key]
    cpu_at: Array
    cpu: Array
    memory_at: Array
    memory: Array

    @property
    def count(self) -> int:
        """The values taken (CPU and memory)."""
        return len(self.cpu) + len(self.memory)

    def lists(self) -> dict[Key, Taken]:
        """Per key, the CPU cores and the memory bytes taken, in order."""
        out: dict[Key, Taken] = {k: ([], []) for k in self.keys}
        keys = self.keys
        for i, v in zip(self.cpu_at.tolist(), self.cpu.tolist(), strict=True):
            out[keys[i]][0].append(v)
        for i, v in zip(self.memory_at.tolist(), self.memory.tolist(), strict=True):
            out[keys[i]][1].append(v)
        return out

    def with_values(self) -> TakenColumns:
        """The same without the keys that took nothing."""
        used = np.zeros(len(self.keys), dtype=bool)
        used[self.cpu_at] = True
        used[self.memory_at] = True
        if used.all():
            return self
        index = np.cumsum(used) - 1  # a kept key's new index
        keys = [k for k, u in zip(self.keys, used.tolist(), strict=True) if u]
        return TakenColumns(keys, index[self.cpu_at], self.cpu, index[self.memory_at], self.memory)

    @classmethod
    def of_lists(cls, taken: Mapping[Key, Taken]) -> TakenColumns:
        """The columns of `lists`' form (its keys in order, each key's values in order)."""
        keys = list(taken)
        cpu = [c for c, _ in taken.values()]
        memory = [m for _, m in taken.values()]
        return cls(keys, *_flat(cpu), *_flat(memory))


def _flat(values: list[list[float]]) -> tuple[Array, Array]:
    """Each value with its list's index, and the values, flattened in order."""
    sizes = [len(v) for v in values]
    at = np.repeat(np.arange(len(values), dtype=np.int64), sizes)
    return at, np.fromiter(chain.from_iterable(values), np.float64, sum(sizes))


def taken_by_rows(
    key_of: Callable[[int], Key],
    rows: Array,
    cpu_taken: Array,
    cores: Array,
    memory_taken: Array,
    usage: Array,
) -> TakenColumns:
    """The columns of samples added together, each to the model's row `rows[i]` (one row per
    workload container while they were added): a key per row (`key_of(i)`: the workload and
    container of sample i), in the order of the samples that first name it; CPU `cores` where
    `cpu_taken`, memory `usage` where `memory_taken`."""
    if not len(rows):
        return TakenColumns([], *_flat([]), *_flat([]))
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # the rows in the order first named
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    at = rank[inverse.reshape(-1)]
    keys = [key_of(i) for i in first[order].tolist()]
    cpu, memory = at[cpu_taken], at[memory_taken]
    return TakenColumns(keys, cpu, cores[cpu_taken], memory, usage[memory_taken])
