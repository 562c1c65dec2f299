"""Workloads' usage by time of day, and each node's level over the next hours from its pods'.

The windows (app.core.placement.windows) say where a node has been; they cannot say where it is
going. A node whose pods peak in the evening looks as empty at noon as one whose pods peak at
noon, and a pod placed on the first adds to its evening peak. Placement alone can hold the spread
of node levels far lower when it knows the next hours (benchmarks/water_level.py, the clairvoyant
runs), and most services' usage repeats by time of day. So the leader keeps, per workload, a
**daily profile**: its mean usage per pod in each 15-minute slot of the day (UTC), and from the
profiles of the pods each node runs, the node's **level ahead**: its level over the last 15 minutes
moved by the change its pods' profiles show from the present slot to each of the next slots.

A profile's slot is an exponentially weighted mean of the samples that fell in it, each weighing
`exp(-age / 7 days)` of a new one, so last week's days count more than older ones, and a slot
keeps its weight by time, not by count (a missed run weighs nothing). A profile says nothing until
every slot of the day has had a sample (a whole day learned): a half-learned day would make the
unknown slots look idle. A pod whose workload has no complete profile moves its node by nothing:
its node's level ahead stays at the measured level for it.

Pure: no I/O, numpy arrays.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]

DAY = 86400.0
SLOT_SECONDS = 900.0
SLOTS = int(DAY // SLOT_SECONDS)  # 96 a day
MEMORY = 7 * DAY  # a sample's weight falls by e every week
ENCODED_BYTES = SLOTS * (3 * 4 + 8)  # a stored profile: three float32s and a float64 a slot


def slot_of(at: float) -> int:
    """The 15-minute slot of the day (UTC) holding Unix time `at`."""
    return int((at % DAY) // SLOT_SECONDS)


@dataclass(frozen=True, slots=True)
class DailyProfile:
    """One workload's mean usage per pod (millicores, bytes) per slot of the day: a view of its
    row in `Profiles` (or arrays of its own)."""

    cpu: Floats
    memory: Floats
    weight: Floats  # the slot's samples' total weight; 0: never seen
    seen_at: Floats  # Unix time of the slot's newest sample

    @property
    def complete(self) -> bool:
        """Every slot of the day has had a sample."""
        return bool((self.weight > 0).all())

    def ahead(self, at: float, slots: int) -> tuple[Floats, Floats] | None:
        """(CPU, memory) per pod in the slot of `at` and the `slots - 1` after it; None until the
        profile is complete."""
        if not self.complete:
            return None
        index = (slot_of(at) + np.arange(slots)) % SLOTS
        return self.cpu[index], self.memory[index]


class Profiles:
    """The leader's profiles, one row of arrays per workload (any hashable key), fed once per
    recommender run with every workload's usage per pod (`fold_run`: all rows at once), and
    which workload each running pod belongs to.

    Not thread-safe by itself: the recommender writes it and the node-levels job reads it, both
    in the leader's job runner, one job at a time."""

    def __init__(self) -> None:
        self.index: dict[object, int] = {}  # workload -> row
        self.keys: list[object | None] = []  # row -> workload (None: a free row)
        # single precision for the means and weights (a profile is a forecast: 7 digits are
        # plenty), double for the times: 1,920 bytes a workload
        self.cpu = np.zeros((0, SLOTS), dtype=np.float32)
        self.memory = np.zeros((0, SLOTS), dtype=np.float32)
        self.weight = np.zeros((0, SLOTS), dtype=np.float32)
        self.seen_at = np.full((0, SLOTS), -np.inf)
        self._free: list[int] = []
        self._pods: tuple[Sequence[str] | None, Sequence[str], Sequence[object]] = ((), (), ())
        self._owners: dict[tuple[str, str], object] | None = None

    def __len__(self) -> int:
        return len(self.index)

    def profile(self, key: object) -> DailyProfile | None:
        """The workload's profile, if any: views of its row, which the next runs change until
        the rows grow (a new workload past their size); then ask again."""
        r = self.index.get(key)
        if r is None:
            return None
        return DailyProfile(self.cpu[r], self.memory[r], self.weight[r], self.seen_at[r])

    def row(self, key: object) -> int:
        """The workload's row, a new (empty) one for a workload not seen before."""
        r = self.index.get(key)
        if r is not None:
            return r
        if not self._free:
            self._grow()
        r = self._free.pop()
        self.index[key] = r
        self.keys[r] = key
        return r

    def _grow(self) -> None:
        old = len(self.keys)
        new = max(64, old * 2)
        more = np.zeros((new - old, SLOTS), dtype=np.float32)
        self.cpu = np.vstack([self.cpu, more])
        self.memory = np.vstack([self.memory, more])
        self.weight = np.vstack([self.weight, more])
        self.seen_at = np.vstack([self.seen_at, np.full((new - old, SLOTS), -np.inf)])
        self.keys.extend([None] * (new - old))
        self._free.extend(range(new - 1, old - 1, -1))

    def fold_run(
        self, usage: Iterable[tuple[object, str, str, float, float | None, float | None]]
    ) -> None:
        """One run's container samples, (workload, namespace, pod, time, CPU cores, memory
        bytes) each: `fold_columns` on their columns."""
        rows = list(usage)
        ws = [r[0] for r in rows]
        namespaces, pods = [r[1] for r in rows], [r[2] for r in rows]
        times, cores, memory = [r[3] for r in rows], [r[4] for r in rows], [r[5] for r in rows]
        self.fold_columns(ws, pods, times, cores, memory, namespaces)

    def fold_columns(
        self,
        ws: Sequence[object],
        pods: Sequence[str],
        times: Sequence[float],
        cores: Sequence[float | None],
        memory: Sequence[float | None],
        namespaces: Sequence[str] | None = None,
    ) -> None:
        """One run's container samples by column: each one's workload, pod, time, CPU cores and
        memory bytes (None: that resource not reported, counted as 0), a pod's samples one
        after the other. Every workload's usage summed over its containers and divided by its
        pods is folded into its profile at its newest sample's time, all workloads at once.
        The pods' workloads become this run's (`workload_of_pod`); without `namespaces`, each
        pod's is its workload's `namespace`."""
        n = len(ws)
        self._pods, self._owners = (namespaces, pods, ws), None
        if not n:
            return
        # a run's samples come grouped: a workload's (by key object) and a pod's one after
        # the other, so keys are hashed once a group, not once a sample
        new_workload = np.ones(n, dtype=bool)
        new_workload[1:] = ~np.fromiter(map(operator.is_, ws[1:], ws[:-1]), bool, n - 1)
        starts = np.flatnonzero(new_workload)
        group_rows = np.fromiter((self.row(ws[i]) for i in starts.tolist()), np.intp, len(starts))
        rows = np.repeat(group_rows, np.diff(np.append(starts, n)))
        new_pod = new_workload.copy()
        new_pod[1:] |= ~np.fromiter(map(operator.eq, pods[1:], pods[:-1]), bool, n - 1)
        if namespaces is not None:
            same = map(operator.eq, namespaces[1:], namespaces[:-1])
            new_pod[1:] |= ~np.fromiter(same, bool, n - 1)
        size = len(self.keys)
        pod_count = np.bincount(rows[new_pod], minlength=size)
        cpu = np.bincount(rows, weights=_amounts(cores), minlength=size)
        mem = np.bincount(rows, weights=_amounts(memory), minlength=size)
        at = np.full(size, -np.inf)
        np.maximum.at(at, rows, np.array(times, dtype=float))
        seen = np.flatnonzero(pod_count)
        per_pod = pod_count[seen]
        self._fold(seen, at[seen], cpu[seen] * 1000.0 / per_pod, mem[seen] / per_pod)

    def _fold(self, rows: npt.NDArray[np.intp], at: Floats, cpu: Floats, memory: Floats) -> None:
        """Each row's sample (time, millicores and bytes per pod) into its slot: an
        exponentially weighted mean by time; a sample no newer than its slot's newest (the
        same metrics read twice) changes nothing."""
        slots = ((at % DAY) // SLOT_SECONDS).astype(np.intp)
        last = self.seen_at[rows, slots]
        newer = at > last
        rows, slots = rows[newer], slots[newer]
        at, cpu, memory, last = at[newer], cpu[newer], memory[newer], last[newer]
        finite = np.isfinite(last)
        kept = np.zeros(len(rows))
        kept[finite] = np.exp(-(at[finite] - last[finite]) / MEMORY)
        weight = self.weight[rows, slots] * kept + 1.0
        self.cpu[rows, slots] += (cpu - self.cpu[rows, slots]) / weight
        self.memory[rows, slots] += (memory - self.memory[rows, slots]) / weight
        self.weight[rows, slots] = weight
        self.seen_at[rows, slots] = at

    @property
    def workload_of_pod(self) -> dict[tuple[str, str], object]:
        """(namespace, pod) -> workload of the pods of the last run; built when first asked
        (by the node-levels job), not at every run."""
        if self._owners is None:
            namespaces, pods, ws = self._pods
            if namespaces is None:
                namespaces = [w.namespace for w in ws]  # type: ignore[attr-defined]
            self._owners = dict(zip(zip(namespaces, pods, strict=True), ws, strict=True))
        return self._owners

    def encoded(self) -> Iterator[tuple[object, bytes]]:
        """Each workload with its row as bytes (little-endian: the CPU, memory and weight
        float32s, then the times' float64s, a slot each: ENCODED_BYTES), to be stored."""
        for key, r in self.index.items():
            yield (
                key,
                b"".join(
                    (
                        self.cpu[r].astype("<f4").tobytes(),
                        self.memory[r].astype("<f4").tobytes(),
                        self.weight[r].astype("<f4").tobytes(),
                        self.seen_at[r].astype("<f8").tobytes(),
                    )
                ),
            )

    def restore(self, key: object, data: bytes) -> bool:
        """The workload's row from `encoded` bytes; False (and nothing changed) when they are not
        a profile: another length, NaN, a negative weight or mean."""
        if len(data) != ENCODED_BYTES:
            return False
        f4 = np.frombuffer(data, dtype="<f4", count=3 * SLOTS)
        at = np.frombuffer(data, dtype="<f8", offset=3 * SLOTS * 4)
        if np.isnan(f4).any() or (f4 < 0).any() or np.isnan(at).any():
            return False
        r = self.row(key)
        self.cpu[r], self.memory[r], self.weight[r] = f4[:SLOTS], f4[SLOTS:-SLOTS], f4[-SLOTS:]
        self.seen_at[r] = at
        return True

    def clear(self) -> None:
        """Forgets every profile (before restoring the stored ones)."""
        self.forget(())

    def forget(self, keep: Iterable[object]) -> int:
        """Drops the profiles of workloads not in `keep` (gone, or idle); returns how many."""
        kept = set(keep)
        gone = [w for w in self.index if w not in kept]
        for w in gone:
            r = self.index.pop(w)
            self.keys[r] = None
            self.cpu[r] = self.memory[r] = self.weight[r] = 0.0
            self.seen_at[r] = -np.inf
            self._free.append(r)
        return len(gone)


def _amounts(values: Sequence[float | None]) -> Floats:
    """A column of amounts, None (not reported) as 0."""
    column: Floats = np.nan_to_num(np.array(values, dtype=float))  # None converts to NaN
    return column


def node_ahead(level: float, allocatable: float, change: Floats) -> tuple[float, ...]:
    """A node's level over the next hours: `level` (its present one, a fraction of `allocatable`)
    plus `change`, what its pods' profiles change from the present slot (in the resource's
    units), over `allocatable`; nothing without allocatable."""
    if allocatable <= 0:
        return ()
    return tuple(float(x) for x in change / allocatable + level)
