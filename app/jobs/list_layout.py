"""The recommender's feed of a PodMetrics LIST, kept by item for the next LIST (no I/O).

Feeding a LIST item means finding its pod in the cache, the pod's workload, its containers' CPU
requests and, in the model, each container's pod container. Done item by item, in Python, that
was most of a steady run's feed at 150,000 pods: each item touches a dozen objects spread over a
heap of a gigabyte. Yet for a pod whose view the informer kept (a view is immutable: a changed
pod is a new view) it comes out as it did the last run. So the feed keeps what each LIST item
was fed as (`Layout`) and `match` compares the next LIST with it a column at a time (C-level
maps over lists, numpy over indices): an item is taken from its earlier self (`Match.reused`)
when the earlier LIST had an item of the same pod (metrics-server sorts its LIST by namespace
and name, so the two line up but for the pods that came and went), fed whole then (every
container with a valid timestamp), of the same view, with the same containers in the same order
and, once the owner caches moved (ClusterView.owners_version), the same workload by the walk.
Its samples then take their CPU requests and pod containers (with the model's tickets,
ArrayModel.add_usage_table's `hints`: a pod container dropped since is looked up by its key
again) from the layout. Every other item is fed as before, one by one.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from app.core.recommend.array_model import ArrayModel
from app.core.recommend.podmetrics import PodMetrics
from app.core.recommend.samples import item_time
from app.core.savings import PodsSeen
from app.core.workload_key import WorkloadKey

Array = Any
_GONE = object()  # what an item fed in part, or not at all, was fed as: no view is it


@dataclass
class Layout:
    """What a LIST's items were fed as, in the LIST's order: per item its namespace and name,
    the pod view it was fed whole as (or `_GONE`), its workload (None: not fed; an item fed in
    part has one: its pod is among its workload's pods seen) and its first sample; per sample
    its container, CPU request in cores, pod container and ticket. And each workload's pods as
    fed (PodsSeen), kept for the workloads none of whose items changed."""

    model: ArrayModel
    owners: object  # the owners' version the workloads were found at
    namespaces: list[str]
    names: list[str]
    views: list[object]
    workloads: list[WorkloadKey | None]
    start: Array  # int64, one more than the items: item i's samples are start[i]:start[i + 1]
    containers: list[str]
    requests: Array  # float64
    pcs: Array  # int64
    tickets: Array  # int64
    seen: dict[WorkloadKey, PodsSeen]

    def lost(self, earlier: Array) -> set[WorkloadKey]:
        """The workloads of the items here that no item of the new LIST repeats (`earlier`:
        Match.earlier): their pods seen may have changed."""
        repeated = np.zeros(len(self.names), dtype=bool)
        repeated[earlier[earlier >= 0]] = True
        return {w for w in _picked(self.workloads, np.flatnonzero(~repeated)) if w is not None}

    def item_workloads(self, m: Match) -> list[WorkloadKey | None]:
        """Per item of the new LIST, its workload when it is reused (None otherwise)."""
        return _picked([*self.workloads, None], m.earlier)


@dataclass
class Match:
    """A LIST against the last one's layout: per item its pod view (None: not in the cache),
    its timestamp, its containers' names and count, whether it is taken from the layout
    (`reused`) and, if so, which of the layout's items it is (`earlier`); per sample of the
    reused items, the layout's sample it repeats (`samples`)."""

    namespaces: list[str]
    names: list[str]
    views: list[Any]
    times: list[float | None]
    containers: list[str]  # every item's, flattened
    counts: Array  # int64 per item
    reused: Array  # bool per item
    earlier: Array  # int64 per item, -1 where not reused
    samples: Array  # int64, per sample of the reused items in order


def item_times(stamps: list[Any]) -> list[float | None]:
    """item_time of each stamp, each distinct text read once (a scrape's pods share theirs)."""
    try:
        distinct = set(stamps)
    except TypeError:  # a stamp that is not text (logged when its item is fed)
        return [item_time(s) for s in stamps]
    read = {s: item_time(s) for s in distinct}
    return list(map(read.__getitem__, stamps))


def match(
    layout: Layout | None,
    metrics: Sequence[PodMetrics],
    pods: Mapping[tuple[str, str], Any],
    owners_version: object,
    workload_of: Callable[[Any], WorkloadKey | None],
) -> Match:
    """This LIST's items against `layout` (None: nothing is reused)."""
    n = len(metrics)
    namespaces = [m.metadata.namespace for m in metrics]
    names = [m.metadata.name for m in metrics]
    views = list(map(pods.get, zip(namespaces, names, strict=True)))
    per_item = [m.containers for m in metrics]
    counts = np.fromiter(map(len, per_item), np.int64, n)
    containers = [c.name for cs in per_item for c in cs]
    times = item_times([m.timestamp for m in metrics])
    none = np.zeros(n, dtype=bool)
    if layout is None or not n:
        return Match(
            namespaces,
            names,
            views,
            times,
            containers,
            counts,
            none,
            np.full(n, -1),
            np.zeros(0, np.int64),
        )
    if namespaces == layout.namespaces and names == layout.names:
        earlier = np.arange(n, dtype=np.int64)  # the same pods in the same order
    else:
        keys_then = zip(layout.namespaces, layout.names, strict=True)
        at = {key: j for j, key in enumerate(keys_then)}
        keys = zip(namespaces, names, strict=True)
        earlier = np.fromiter(map(at.get, keys, repeat(-1)), np.int64, n)
    same = np.fromiter(map(operator.is_, views, _picked([*layout.views, _GONE], earlier)), bool, n)
    start = layout.start
    prior = np.where(earlier >= 0, start[earlier + 1] - start[np.maximum(earlier, 0)], -1)
    reused = (
        same & (prior == counts) & np.fromiter(map(operator.is_not, times, repeat(None)), bool, n)
    )
    if owners_version is None or owners_version != layout.owners:
        known = _picked([*layout.workloads, None], earlier)  # -1: the None after them
        for i in np.flatnonzero(reused).tolist():
            reused[i] = workload_of(views[i]) is known[i]
    # the reused items' samples: the layout's, container by container, if the names agree
    items = np.flatnonzero(reused)
    sizes = counts[items]
    offsets = np.repeat(np.cumsum(sizes) - sizes, sizes)
    samples = np.repeat(start[earlier[items]], sizes) + np.arange(int(sizes.sum())) - offsets
    mine = (np.cumsum(counts) - counts)[items]
    own = np.repeat(mine, sizes) + np.arange(len(samples)) - offsets
    agree = np.fromiter(
        map(operator.eq, _picked(containers, own), _picked(layout.containers, samples)),
        bool,
        len(samples),
    )
    if not agree.all():  # a container renamed or reordered: its item is fed one by one
        bad = np.unique(np.repeat(items, sizes)[~agree])
        reused[bad] = False
        keep = ~np.isin(np.repeat(items, sizes), bad)
        samples = samples[keep]
    earlier = np.where(reused, earlier, -1)
    return Match(namespaces, names, views, times, containers, counts, reused, earlier, samples)


def _picked(values: list[Any], at: Array) -> list[Any]:
    """values[j] for each j of `at` (an int64 array; -1 is the last value)."""
    if not len(at):
        return []
    if len(at) == 1:
        return [values[int(at[0])]]
    return list(operator.itemgetter(*at.tolist())(values))


def reused_columns(layout: Layout, m: Match, metrics: Sequence[PodMetrics]) -> Columns:
    """The samples of the reused items, in order, as columns: workload, pod, container, time,
    CPU and memory as sent, CPU request in cores; and each one's item and hint."""
    items = np.flatnonzero(m.reused)
    sizes = m.counts[items]
    item_of = np.repeat(items, sizes)
    at = item_of.tolist()
    workloads = _picked(layout.workloads, m.earlier[item_of])
    usages = [c.usage for i in items.tolist() for c in metrics[i].containers]
    return Columns(
        item_of,
        workloads,
        [m.names[i] for i in at],
        _picked(layout.containers, m.samples),
        [m.times[i] for i in at],
        [u.cpu for u in usages],
        layout.requests[m.samples].tolist(),
        [u.memory for u in usages],
        layout.pcs[m.samples],
        layout.tickets[m.samples],
    )


@dataclass
class Columns:
    """Samples as columns (RawColumns' fields), each with its LIST item and its hint."""

    items: Array  # int64
    workloads: list[Any]
    pods: list[str]
    containers: list[str]
    times: list[Any]
    cpus: list[Any]
    requests: list[float]
    memories: list[Any]
    pcs: Array  # int64, -1: none
    tickets: Array  # int64

    @classmethod
    def of_raw(cls, items: list[int], raw: Sequence[tuple[Any, ...]]) -> Columns:
        """RawUsage tuples (raw_usages'), each of the LIST item `items[i]`, without hints."""
        columns: list[list[Any]] = [list(c) for c in zip(*raw, strict=True)] if raw else [[]] * 7
        none = np.full(len(raw), -1, dtype=np.int64)
        ws, pods, containers, times, cpus, requests, memories = columns
        return cls(
            np.array(items, dtype=np.int64),
            ws,
            pods,
            containers,
            times,
            cpus,
            requests,
            memories,
            none,
            none.copy(),
        )

    def raw(self) -> tuple[Any, ...]:
        return (
            self.workloads,
            self.pods,
            self.containers,
            self.times,
            self.cpus,
            self.requests,
            self.memories,
        )

    @classmethod
    def merged(cls, a: Columns, b: Columns) -> Columns:
        """Both sets of samples, in the order of their items (a's first on a tie)."""
        if not len(b.items):
            return a
        if not len(a.items):
            return b
        items = np.concatenate([a.items, b.items])
        order = np.argsort(items, kind="stable")

        def both(x: list[Any], y: list[Any]) -> list[Any]:
            return _picked([*x, *y], order)

        return cls(
            items[order],
            both(a.workloads, b.workloads),
            both(a.pods, b.pods),
            both(a.containers, b.containers),
            both(a.times, b.times),
            both(a.cpus, b.cpus),
            both(a.requests, b.requests),
            both(a.memories, b.memories),
            np.concatenate([a.pcs, b.pcs])[order],
            np.concatenate([a.tickets, b.tickets])[order],
        )


def recorded(
    model: ArrayModel,
    owners: object,
    m: Match,
    columns: Columns,
    whole: list[int],
    workloads: list[WorkloadKey | None],
    seen: Mapping[WorkloadKey, Any],
) -> Layout:
    """The layout of a LIST fed as `columns` (in the LIST's order, every sample given to the
    model's add_usage_table, which was the last): its reused items and those of `whole` (fed one
    by one, every container), with the pod containers their samples went to; `workloads`: per
    item, the workload it was fed to, whole or in part (None: not fed); `seen`: each fed
    workload's WorkloadInfo."""
    kept = m.reused.copy()
    kept[whole] = True
    pcs = model.last_table
    kept[columns.items[pcs < 0]] = False  # a sample without a value went to no pod container
    samples = np.flatnonzero(kept[columns.items])
    counts = np.where(kept, m.counts, 0)
    return Layout(
        model,
        owners,
        list(map(sys.intern, m.namespaces)),  # a namespace's pods share one string
        m.names,
        [v if k else _GONE for v, k in zip(m.views, kept.tolist(), strict=True)],
        workloads,
        np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        list(map(sys.intern, _picked(columns.containers, samples))),
        np.asarray(columns.requests, dtype=np.float64)[samples],
        pcs[samples],
        model.ticket_of[pcs[samples]],
        {w: info.seen for w, info in seen.items()},
    )
