"""Pods bound to a node since its last metrics: their predicted usage, added to the node's level.

NodeMetrics lag: a node's usage is sampled every scrape (metrics-server: 15-60 s) and the pods
bound since then are not in it. Without a correction every pod of a burst sees the same levels and
goes to the same lowest node. So each bound pod's predicted usage (app.core.placement.pod_level)
is added to its node until metrics taken `lag` seconds after the bind (the pod started and was
scraped at least once) arrive for that node, or the pod is deleted, or `expire` seconds pass
(metrics that stopped coming must not keep a node hot forever).

Memory is bounded: at most `max_pods` pods are held; past it the oldest bind is dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from app.core.sizing.node_fit import Amounts


@dataclass(frozen=True, slots=True)
class Bound:
    node: str
    at: float  # Unix time of the bind (when the pod was seen bound)
    cpu: int  # millicores predicted
    memory: int  # bytes predicted


class HotSpots:
    """Not thread-safe by itself: its owner serialises calls (app.webhook.extender)."""

    def __init__(self, lag: float = 60.0, expire: float = 600.0, max_pods: int = 20_000) -> None:
        self.lag, self.expire, self.max_pods = lag, expire, max_pods
        self._pods: OrderedDict[str, Bound] = OrderedDict()  # by uid, oldest bind first
        self._totals: dict[str, list[int]] = {}  # node -> [millicores, bytes]

    def __len__(self) -> int:
        return len(self._pods)

    def bound(self, uid: str, node: str, cpu: int, memory: int, at: float) -> None:
        """A pod seen bound to `node` at `at`; seen again (any update), it is not added twice."""
        if uid in self._pods:
            return
        self._pods[uid] = Bound(node, at, cpu, memory)
        self._add(node, cpu, memory)
        while len(self._pods) > self.max_pods:
            _, oldest = self._pods.popitem(last=False)
            self._add(oldest.node, -oldest.cpu, -oldest.memory)

    def gone(self, uid: str) -> None:
        """The pod was deleted (or finished): it no longer adds to its node."""
        b = self._pods.pop(uid, None)
        if b is not None:
            self._add(b.node, -b.cpu, -b.memory)

    def covered(self, metrics_at: dict[str, float], now: float) -> None:
        """Drops the pods whose node has metrics from `lag` seconds after their bind, and every
        pod bound more than `expire` seconds before `now`."""
        for uid, b in list(self._pods.items()):
            seen = metrics_at.get(b.node)
            if now - b.at > self.expire or (seen is not None and seen >= b.at + self.lag):
                self.gone(uid)

    def extra(self, node: str) -> Amounts:
        """(millicores, bytes) predicted on `node` beyond its last metrics."""
        t = self._totals.get(node)
        return (t[0], t[1]) if t is not None else (0, 0)

    def nodes(self) -> dict[str, Amounts]:
        return {n: (t[0], t[1]) for n, t in self._totals.items()}

    def _add(self, node: str, cpu: int, memory: int) -> None:
        t = self._totals.setdefault(node, [0, 0])
        t[0] += cpu
        t[1] += memory
        if t[0] == 0 and t[1] == 0:
            del self._totals[node]
