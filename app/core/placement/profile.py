"""Workloads' usage by time of day, and each node's level over the next hours from its pods'.

The windows (app.core.placement.windows) say where a node has been; they cannot say where it is
going. A node whose pods peak in the evening looks as empty at noon as one whose pods peak at
noon, and a pod placed on the first adds to its evening peak. Placement alone can hold the spread
of node levels far lower when it knows the next hours (benchmarks/water_level.py, the clairvoyant
runs), and most services' usage repeats by time of day. So the leader keeps, per workload, a
**daily profile**: its mean usage per pod in each 15-minute slot of the day (UTC), and from the
profiles of the pods each node runs, the node's **level ahead**: its newest measured level moved by
the change its pods' profiles show from the present slot to each of the next slots.

A profile's slot is an exponentially weighted mean of the samples that fell in it, each weighing
`exp(-age / 7 days)` of a new one, so last week's days count more than older ones, and a slot
keeps its weight by time, not by count (a missed run weighs nothing). A profile says nothing until
every slot of the day has had a sample (a whole day learned): a half-learned day would make the
unknown slots look idle. A pod whose workload has no complete profile moves its node by nothing:
its node's level ahead stays at the newest measurement for it.

Pure: no I/O, numpy arrays.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]

DAY = 86400.0
SLOT_SECONDS = 900.0
SLOTS = int(DAY // SLOT_SECONDS)  # 96 a day
MEMORY = 7 * DAY  # a sample's weight falls by e every week


def slot_of(at: float) -> int:
    """The 15-minute slot of the day (UTC) holding Unix time `at`."""
    return int((at % DAY) // SLOT_SECONDS)


@dataclass(slots=True)
class DailyProfile:
    """One workload's mean usage per pod (millicores, bytes) per slot of the day."""

    cpu: Floats
    memory: Floats
    weight: Floats  # the slot's samples' total weight; 0: never seen
    seen_at: Floats  # Unix time of the slot's newest sample

    @classmethod
    def empty(cls) -> DailyProfile:
        return cls(np.zeros(SLOTS), np.zeros(SLOTS), np.zeros(SLOTS), np.full(SLOTS, -np.inf))

    def fold(self, at: float, cpu: float, memory: float) -> None:
        """A sample taken at `at`: the usage per pod. One no newer than its slot's newest is
        ignored (the same metrics read twice)."""
        s = slot_of(at)
        last = float(self.seen_at[s])
        if at <= last:
            return
        kept = float(np.exp(-(at - last) / MEMORY)) if np.isfinite(last) else 0.0
        weight = float(self.weight[s]) * kept + 1.0
        self.cpu[s] += (cpu - self.cpu[s]) / weight
        self.memory[s] += (memory - self.memory[s]) / weight
        self.weight[s], self.seen_at[s] = weight, at

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
    """The leader's profiles, by workload (any hashable key), fed once per recommender run with
    each workload's usage per pod, and which workload each running pod belongs to.

    Not thread-safe by itself: the recommender writes it and the node-levels job reads it, both
    in the leader's job runner, one job at a time."""

    def __init__(self) -> None:
        self.by_workload: dict[object, DailyProfile] = {}
        self.workload_of_pod: dict[tuple[str, str], object] = {}

    def fold_run(
        self, usage: Iterable[tuple[object, str, str, float, float | None, float | None]]
    ) -> dict[tuple[str, str], object]:
        """One run's container samples, (workload, namespace, pod, time, CPU cores, memory
        bytes) each (None: that resource not reported, counted as 0): every workload's usage
        summed over its containers and divided by its pods is folded into its profile at the
        newest sample's time. Replaces the pods' workloads."""
        totals: dict[object, list[float]] = {}  # workload -> [cores, bytes, newest time]
        pods: dict[object, set[str]] = {}
        owners: dict[tuple[str, str], object] = {}
        for w, namespace, pod, at, cores, memory in usage:
            t = totals.get(w)
            if t is None:
                t = totals[w] = [0.0, 0.0, at]
                pods[w] = set()
            t[0] += cores or 0.0
            t[1] += memory or 0.0
            if at > t[2]:
                t[2] = at
            pods[w].add(pod)
            owners[(namespace, pod)] = w
        for w, (cores, memory, at) in totals.items():
            profile = self.by_workload.get(w)
            if profile is None:
                profile = self.by_workload[w] = DailyProfile.empty()
            n = len(pods[w])
            profile.fold(at, cores * 1000.0 / n, memory / n)
        self.workload_of_pod = owners
        return owners

    def forget(self, keep: Iterable[object]) -> int:
        """Drops the profiles of workloads not in `keep` (gone, or idle); returns how many."""
        kept = set(keep)
        gone = [w for w in self.by_workload if w not in kept]
        for w in gone:
            del self.by_workload[w]
        return len(gone)


def node_ahead(
    level: float,
    allocatable: float,
    changes: Iterable[Floats],
) -> tuple[float, ...]:
    """A node's level over the next slots: `level` (its newest, a fraction of `allocatable`)
    plus the sum of its pods' `changes` (each pod's usage ahead minus its usage in the present
    slot, in the resource's units) over `allocatable`. Without changes, `level` itself (the
    length of the first change, or nothing)."""
    total: Floats | None = None
    for c in changes:
        total = c.copy() if total is None else total + c
    if total is None or allocatable <= 0:
        return ()
    total /= allocatable
    total += level
    return tuple(float(x) for x in total)
