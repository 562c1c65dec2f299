"""The recommendation over time: usage percentiles between history points, and the points a
replay of past samples would have written.

The recommender keeps one history point per workload container an hour (app.store.history): the
target then, the requests then and, from here, the 50th and 90th percentile of the usage samples
since the previous point. Percentiles come from counts in the recommender's own exponential
buckets, so a window of any number of samples takes a few dozen numbers: a percentile is the
largest sample of the bucket where the count reaches it (never below the exact percentile, and
less than a bucket above it).

`replay` feeds samples of the past (the usage history loaded from Prometheus at start) into the
model in time order and records a point at every hour boundary, as the running recommender would
have, so a new installation's charts start with days of points instead of one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.array_model import Sample as ModelSample
from app.core.recommend.histogram import ExponentialBuckets
from app.core.recommend.histogram_rows import find_buckets
from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.taken import TakenColumns
from app.core.recommendation import ContainerPolicy
from app.core.resources import Resources, amount
from app.core.workload_key import WorkloadKey, sorted_keys

HOUR = 3600.0
Array = Any


@dataclass(frozen=True)
class UsagePercentiles:
    """Of the samples in a window: millicores and bytes; None without a sample of it."""

    cpu_p50: int | None = None
    cpu_p90: int | None = None
    memory_p50: int | None = None
    memory_p90: int | None = None


class _Counts:
    """How many samples fell in each bucket, and the largest of them. Two dicts of plain numbers,
    not a (count, largest) tuple per bucket: a dict holding only numbers is not tracked by the
    cyclic garbage collector, and a run leaves 15,000 windows' counts for its first collection
    to walk (the recommender pauses the collector during a run: app.core.gcpause)."""

    def __init__(self, buckets: ExponentialBuckets) -> None:
        self.buckets = buckets
        self.counts: dict[int, int] = {}  # bucket -> samples in it
        self.tops: dict[int, float] = {}  # bucket -> the largest of them
        self.total = 0

    def add(self, value: float) -> None:
        if not math.isfinite(value) or value < 0:
            return
        b = self.buckets.find_bucket(value)
        self.counts[b] = self.counts.get(b, 0) + 1
        top = self.tops.get(b)
        if top is None or value > top:
            self.tops[b] = value
        self.total += 1

    def add_counted(self, bucket: int, count: int, top: float) -> None:
        """`count` samples of bucket `bucket`, the largest `top` (add_all's, per bucket)."""
        self.counts[bucket] = self.counts.get(bucket, 0) + count
        known = self.tops.get(bucket)
        if known is None or top > known:
            self.tops[bucket] = top
        self.total += count

    def percentiles(self, ps: tuple[float, ...]) -> list[float | None]:
        """For each p, the largest sample of the bucket where the running count reaches p of
        the total (the buckets sorted once for all of them)."""
        if not self.total:
            return [None] * len(ps)
        order, counts = sorted(self.counts), self.counts
        out: list[float | None] = []
        for p in ps:
            running, threshold, b = 0, p * self.total, 0
            for b in order:
                running += counts[b]
                if running >= threshold:
                    break
            out.append(self.tops[b])
        return out


def add_all(counts: list[_Counts], window: Array, values: Array) -> None:
    """counts[window[i]].add(values[i]) for every i: the same counts and tops, each value's
    bucket found for all at once (histogram_rows.find_buckets: find_bucket's buckets) and the
    values counted per window and bucket by numpy; what is left to Python is one step per
    window and bucket."""
    if not counts or not len(values):
        return
    flat = np.asarray(values, dtype=np.float64)
    window = np.asarray(window, dtype=np.int64)
    keep = np.isfinite(flat) & (flat >= 0)
    if not keep.all():
        flat, window = flat[keep], window[keep]
    if not len(flat):
        return
    buckets = find_buckets(counts[0].buckets, flat)
    code = window * counts[0].buckets.num_buckets + buckets
    pairs, where, how_many = np.unique(code, return_inverse=True, return_counts=True)
    tops = np.full(len(pairs), -np.inf)
    np.maximum.at(tops, where, flat)
    n = counts[0].buckets.num_buckets
    for pair, count, top in zip(pairs.tolist(), how_many.tolist(), tops.tolist(), strict=True):
        counts[pair // n].add_counted(pair % n, count, top)


@lru_cache(maxsize=64)
def _window_buckets(s: RecommenderSettings) -> tuple[ExponentialBuckets, ExponentialBuckets]:
    """The CPU and memory bucket layouts of the windows of settings `s`: one pair shared by all
    of them (a run starts thousands of windows afresh)."""
    return (
        ExponentialBuckets(
            s.cpu_histogram_max, s.cpu_histogram_first_bucket, s.histogram_bucket_ratio
        ),
        ExponentialBuckets(
            s.memory_histogram_max, s.memory_histogram_first_bucket, s.histogram_bucket_ratio
        ),
    )


class UsageWindow:
    """The usage samples of one workload container since its last history point."""

    def __init__(self, settings: RecommenderSettings) -> None:
        cpu, memory = _window_buckets(settings)
        self.cpu = _Counts(cpu)
        self.memory = _Counts(memory)

    def add_cpu(self, cores: float) -> None:
        self.cpu.add(cores)

    def add_memory(self, bytes_: float) -> None:
        self.memory.add(bytes_)

    def percentiles(self) -> UsagePercentiles:
        def milli(v: float | None) -> int | None:
            return None if v is None else amount(v * 1000)

        def whole(v: float | None) -> int | None:
            return None if v is None else amount(v)

        cpu, memory = self.cpu.percentiles((0.5, 0.9)), self.memory.percentiles((0.5, 0.9))
        return UsagePercentiles(milli(cpu[0]), milli(cpu[1]), whole(memory[0]), whole(memory[1]))


Key = tuple[WorkloadKey, str]  # workload, container


@dataclass
class UsageWindows:
    """A window per workload container; `take` hands one over and starts it afresh."""

    settings: RecommenderSettings
    windows: dict[Key, UsageWindow] = field(default_factory=dict)

    def window(self, key: Key) -> UsageWindow:
        w = self.windows.get(key)
        if w is None:
            w = self.windows[key] = UsageWindow(self.settings)
        return w

    def peek(self, key: Key) -> UsageWindow | None:
        """The key's window as it is (None: no sample since its last history point); its
        percentiles are computed when read (UsageWindow.percentiles)."""
        return self.windows.get(key)

    def add_taken(self, taken: TakenColumns) -> int:
        """What ArrayModel.add_usage_columns took, into each key's window (started for every
        key, as `window` starts it): its CPU cores, then its memory bytes, as window(key).add_cpu
        and add_memory of each would, all keys at once (add_all). The values given."""
        windows = [self.window(key) for key in taken.keys]
        add_all([w.cpu for w in windows], taken.cpu_at, taken.cpu)
        add_all([w.memory for w in windows], taken.memory_at, taken.memory)
        return taken.count

    def reset(self, keys: Iterable[Key]) -> None:
        for key in keys:
            self.windows.pop(key, None)


# Replay ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sample:
    """One sample of the past: CPU (cores, with the container's CPU request in cores, which
    weighs it) or memory (bytes)."""

    time: float
    workload: WorkloadKey
    pod: str
    container: str
    cpu_cores: float | None = None
    request_cores: float = 0.0
    memory_bytes: float | None = None


@dataclass(frozen=True)
class HistoryPoint:
    time: float  # an hour boundary, unix seconds
    workload: WorkloadKey
    container: str
    target: Resources
    usage: UsagePercentiles


def replay(
    model: ArrayModel,
    samples: Iterable[Sample],
    policies_for: Callable[[WorkloadKey], list[ContainerPolicy]] | None = None,
    step: float = HOUR,
) -> tuple[int, list[HistoryPoint]]:
    """Feeds `samples` (oldest first) into `model`; at each multiple of `step` the samples
    cross, a point per workload container that had samples since the previous one: its
    recommendation then and the percentiles of those samples. Returns (samples fed, points).
    The samples between two boundaries go in one call (ArrayModel.add_usages: the model as
    sample by sample)."""
    windows = UsageWindows(model.settings)
    points: list[HistoryPoint] = []
    boundary: float | None = None
    fed = 0
    batch: list[ModelSample] = []

    def feed() -> None:
        nonlocal fed
        fed += windows.add_taken(model.add_usage_columns(batch).with_values())
        batch.clear()

    for s in samples:
        if boundary is None:
            boundary = (math.floor(s.time / step) + 1) * step
        if s.time >= boundary:
            feed()
            while s.time >= boundary:
                points += _points_at(model, windows, boundary, policies_for)
                boundary += step
        batch.append(
            (s.workload, s.pod, s.container, s.time, s.cpu_cores, s.request_cores, s.memory_bytes)
        )
    feed()
    return fed, points


def _points_at(
    model: ArrayModel,
    windows: UsageWindows,
    t: float,
    policies_for: Callable[[WorkloadKey], list[ContainerPolicy]] | None,
) -> list[HistoryPoint]:
    by_workload: dict[WorkloadKey, list[tuple[str, UsageWindow]]] = {}
    for (w, container), window in windows.windows.items():
        by_workload.setdefault(w, []).append((container, window))
    out = []
    workloads = sorted_keys(by_workload)
    recommended = model.recommend_all(workloads, policies_for)
    for w in workloads:
        recs = recommended[w]
        for container, window in sorted(by_workload[w], key=lambda cw: cw[0]):
            rec = recs.get(container)
            if rec is not None:
                out.append(HistoryPoint(t, w, container, rec.target, window.percentiles()))
    windows.windows.clear()
    return out
