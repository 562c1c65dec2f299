"""Pods bound to a node since its last metrics: their predicted usage, added to the node's level.

NodeMetrics lag: a node's usage is sampled every scrape (metrics-server: 15-60 s) and the pods
bound since then are not in it. Without a correction every pod of a burst sees the same levels and
goes to the same lowest node. So each bound pod's predicted usage (app.core.placement.pod_level)
is added to its node until metrics taken `lag` seconds after the bind (the pod started and was
scraped at least once) arrive for that node, or the pod is deleted, or `expire` seconds pass
(metrics that stopped coming must not keep a node hot forever).

The same holds the other way round (cold spots): a pod deleted since its node's last metrics is
still in them, and a rollout that deletes a node's pods would leave the node looking as full as
before until the next scrape. So a pod deleted after it was in its node's metrics subtracts its
predicted usage from the node, until metrics taken `lag` seconds after the deletion cover that.

Memory is bounded: at most `max_pods` pods are held; past it the oldest is dropped first.
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

    def gone(
        self, uid: str, node: str = "", cpu: int = 0, memory: int = 0, at: float = 0.0
    ) -> None:
        """The pod was deleted (or finished) at `at`. A pod held as bound no longer adds to its
        node. Any other (bound before its node's metrics, which count it) on `node`, predicted
        at (cpu, memory), subtracts from it until metrics cover the deletion."""
        b = self._pods.get(uid)
        if b is not None:
            if b.cpu < 0 or b.memory < 0:  # its deletion is held already
                return
            self._drop(uid)  # a bind the metrics did not show yet: nothing else to undo
            return
        if node and (cpu or memory):
            self.bound(uid, node, -cpu, -memory, at)

    def covered(self, metrics_at: dict[str, float], now: float) -> None:
        """Drops the pods whose node has metrics from `lag` seconds after their bind, and every
        pod bound more than `expire` seconds before `now`."""
        for uid, b in list(self._pods.items()):
            seen = metrics_at.get(b.node)
            if now - b.at > self.expire or (seen is not None and seen >= b.at + self.lag):
                self._drop(uid)

    def extra(self, node: str) -> Amounts:
        """(millicores, bytes) predicted on `node` beyond its last metrics."""
        t = self._totals.get(node)
        return (t[0], t[1]) if t is not None else (0, 0)

    def nodes(self) -> dict[str, Amounts]:
        return {n: (t[0], t[1]) for n, t in self._totals.items()}

    def _drop(self, uid: str) -> None:
        b = self._pods.pop(uid)
        self._add(b.node, -b.cpu, -b.memory)

    def _add(self, node: str, cpu: int, memory: int) -> None:
        t = self._totals.setdefault(node, [0, 0])
        t[0] += cpu
        t[1] += memory
        if t[0] == 0 and t[1] == 0:
            del self._totals[node]
