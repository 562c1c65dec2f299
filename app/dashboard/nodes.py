"""The nodes page's data: each node's requested vs used CPU and memory (its "water level").

Read on demand from the API server (nodes, pods, NodeMetrics: three requests) and kept for
CACHE_SECONDS per process, since any worker may serve the page and only the leader has caches.
Without a reachable cluster the page says there is no data.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.core.quantity import amount as quantity_amount
from app.kube.client import api_client
from app.kube.scale import cluster_snapshot
from app.settings import settings

log = logging.getLogger(__name__)
CACHE_SECONDS = 30.0
_cache: tuple[float, list[NodeLevel]] | None = None
_lock = threading.Lock()


@dataclass(frozen=True)
class NodeLevel:
    name: str
    allocatable_cpu: int  # millicores
    allocatable_memory: int  # bytes
    requested_cpu: int
    requested_memory: int
    used_cpu: int | None  # None: no metrics for it
    used_memory: int | None


def levels_from(
    nodes: Iterable[dict[str, Any]],
    pods: Iterable[dict[str, Any]],
    metrics: Iterable[dict[str, Any]],
    parse: Any,
) -> list[NodeLevel]:
    """Pure: raw Node, Pod and NodeMetrics JSON -> levels. `parse(resource, text)` -> amount."""

    def amount(resource: str, text: Any) -> int:
        try:
            return int(parse(resource, text)) if text is not None else 0
        except ValueError:
            return 0

    requested: dict[str, list[int]] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            continue
        r = requested.setdefault(node, [0, 0])
        for c in (pod.get("spec") or {}).get("containers") or []:
            req = (c.get("resources") or {}).get("requests") or {}
            r[0] += amount("cpu", req.get("cpu"))
            r[1] += amount("memory", req.get("memory"))
    used = {(m.get("metadata") or {}).get("name"): m.get("usage") or {} for m in metrics}
    out = []
    for n in nodes:
        name = (n.get("metadata") or {}).get("name", "")
        alloc = (n.get("status") or {}).get("allocatable") or {}
        u = used.get(name)
        req_cpu, req_mem = requested.get(name, [0, 0])
        out.append(
            NodeLevel(
                name,
                amount("cpu", alloc.get("cpu")),
                amount("memory", alloc.get("memory")),
                req_cpu,
                req_mem,
                amount("cpu", u.get("cpu")) if u else None,
                amount("memory", u.get("memory")) if u else None,
            )
        )
    return sorted(out, key=lambda level: level.name)


def node_levels() -> list[NodeLevel]:
    """From the cluster, cached; [] when it cannot be reached (the page then says so)."""
    global _cache
    with _lock:
        if _cache is not None and time.monotonic() - _cache[0] < CACHE_SECONDS:
            return _cache[1]
        try:
            nodes, pods, metrics = cluster_snapshot(
                api_client(settings().cluster.kubeconfig or None)
            )
        except Exception as e:
            log.info("nodes page: cluster not reachable: %s", e)
            return []
        levels = levels_from(nodes, pods, metrics, quantity_amount)
        _cache = (time.monotonic(), levels)
        return levels


def share(part: int | None, whole: int) -> float | None:
    """`part` as a fraction of `whole` (a node's allocatable); None when either is unknown."""
    return part / whole if part is not None and whole > 0 else None


@dataclass(frozen=True)
class Spread:
    """How unevenly the nodes' CPU is requested: the fullest and the emptiest node (requested
    CPU as a share of allocatable) and the difference between them, 0 when all are alike."""

    value: float
    fullest: NodeLevel
    emptiest: NodeLevel

    @property
    def high(self) -> float:
        return self.fullest.requested_cpu / self.fullest.allocatable_cpu

    @property
    def low(self) -> float:
        return self.emptiest.requested_cpu / self.emptiest.allocatable_cpu


def spread(levels: list[NodeLevel]) -> Spread | None:
    """The CPU request spread over the nodes with allocatable CPU; None without two of them."""
    known = [n for n in levels if n.allocatable_cpu]
    if len(known) < 2:
        return None
    fullest = max(known, key=lambda n: n.requested_cpu / n.allocatable_cpu)
    emptiest = min(known, key=lambda n: n.requested_cpu / n.allocatable_cpu)
    s = Spread(0.0, fullest, emptiest)
    return Spread(s.high - s.low, fullest, emptiest)


def unevenness(levels: list[NodeLevel]) -> float | None:
    """Spread of CPU request levels (max - min fraction of allocatable): 0 means even."""
    fractions = [n.requested_cpu / n.allocatable_cpu for n in levels if n.allocatable_cpu]
    return max(fractions) - min(fractions) if fractions else None


@dataclass(frozen=True)
class Unevenness:
    """How unevenly the nodes are really used, for one resource: the used share of allocatable
    of the hottest node minus that of the coolest (`value`, a fraction: 0.4 is 40 percentage
    points), and the population standard deviation of every node's share (`deviation`), over
    the `count` nodes that have metrics."""

    resource: str
    value: float
    deviation: float
    hottest: NodeLevel
    coolest: NodeLevel
    high: float
    low: float
    count: int


def unevenness_of_use(levels: list[NodeLevel], resource: str) -> Unevenness | None:
    """Pure. `resource`: cpu or memory. None without two nodes with metrics and allocatable."""
    shares = []
    for n in levels:
        used = n.used_cpu if resource == "cpu" else n.used_memory
        whole = n.allocatable_cpu if resource == "cpu" else n.allocatable_memory
        if used is not None and whole > 0:
            shares.append((used / whole, n))
    if len(shares) < 2:
        return None
    high, hottest = max(shares, key=lambda s: s[0])
    low, coolest = min(shares, key=lambda s: s[0])
    mean = sum(s for s, _ in shares) / len(shares)
    deviation = (sum((s - mean) ** 2 for s, _ in shares) / len(shares)) ** 0.5
    return Unevenness(resource, high - low, deviation, hottest, coolest, high, low, len(shares))
