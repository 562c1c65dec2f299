"""Places pending pods on nodes by requests against allocatable, as kube-scheduler's
NodeResourcesFit filter and LeastAllocated score do; pods that fit nowhere stay Pending."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from app.simulator.apiserver import podutil, quantity
from app.simulator.apiserver.resources import NODE, POD
from app.simulator.apiserver.store import Store, WatchEvent


@dataclass(slots=True)
class NodeUse:
    cpu: int = 0  # millicores requested by pods bound to the node
    memory: int = 0
    pods: int = 0


class NodeUsage:
    """Requests bound to each node, kept up to date from store events (no rescans)."""

    def __init__(self, store: Store) -> None:
        self.by_node: dict[str, NodeUse] = {}
        self.rebuild(store)
        store.add_listener(self._on_event)

    def rebuild(self, store: Store) -> None:
        """Recount from scratch (after a bulk load, which sends no events)."""
        with store.lock:
            self.by_node = {}
            for _, entry in store.scan(POD)[0]:
                self._add(entry.obj, +1)

    def _on_event(self, event: WatchEvent) -> None:
        if event.rt is not POD:
            return
        if event.prev is not None:
            self._add(event.prev.obj, -1)
        if event.type != "DELETED":
            self._add(event.entry.obj, +1)

    def _add(self, pod: dict[str, Any], sign: int) -> None:
        node = pod.get("spec", {}).get("nodeName")
        if not node or podutil.is_terminal(pod):
            return
        cpu, mem = podutil.requests(pod)
        use = self.by_node.setdefault(node, NodeUse())
        use.cpu += sign * cpu
        use.memory += sign * mem
        use.pods += sign

    def get(self, node: str) -> NodeUse:
        return self.by_node.get(node, NodeUse())


@dataclass(frozen=True, slots=True)
class Capacity:
    cpu: int
    memory: int
    pods: int


def allocatable(node: dict[str, Any]) -> Capacity:
    alloc = node.get("status", {}).get("allocatable") or {}
    return Capacity(
        quantity.millicores(alloc.get("cpu", "0")),
        quantity.bytes_(alloc.get("memory", "0")),
        int(alloc.get("pods", "110")),
    )


def node_is_ready(node: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in node.get("status", {}).get("conditions") or []
    )


def choose_node(store: Store, usage: NodeUsage, pod: dict[str, Any]) -> tuple[str | None, str]:
    """The best node for the pod, or None and the FailedScheduling message kube-scheduler gives."""
    cpu, mem = podutil.requests(pod)
    spec = pod.get("spec", {})
    selector = spec.get("nodeSelector") or {}
    tolerations = spec.get("tolerations") or []
    reasons: Counter[str] = Counter()
    best: tuple[float, str] | None = None
    nodes, _ = store.scan(NODE)
    for _, entry in nodes:
        node = entry.obj
        name = node["metadata"]["name"]
        labels = node["metadata"].get("labels") or {}
        if not node_is_ready(node):
            reasons["node(s) were not ready"] += 1
            continue
        if node.get("spec", {}).get("unschedulable") and not podutil.tolerates(
            tolerations, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
        ):
            reasons["node(s) were unschedulable"] += 1
            continue
        if any(labels.get(k) != v for k, v in selector.items()):
            reasons["node(s) didn't match Pod's node affinity/selector"] += 1
            continue
        if any(
            t.get("effect") in ("NoSchedule", "NoExecute") and not podutil.tolerates(tolerations, t)
            for t in node.get("spec", {}).get("taints") or []
            if t.get("key") != "node.kubernetes.io/unschedulable"
        ):
            reasons["node(s) had untolerated taint"] += 1
            continue
        cap, use = allocatable(node), usage.get(name)
        fits = True
        if use.pods + 1 > cap.pods:
            reasons["Too many pods"] += 1
            fits = False
        if use.cpu + cpu > cap.cpu:
            reasons["Insufficient cpu"] += 1
            fits = False
        if use.memory + mem > cap.memory:
            reasons["Insufficient memory"] += 1
            fits = False
        if not fits:
            continue
        free = (cap.cpu - use.cpu - cpu) / max(cap.cpu, 1) + (cap.memory - use.memory - mem) / max(
            cap.memory, 1
        )
        if best is None or free > best[0]:
            best = (free, name)
    if best is not None:
        return best[1], ""
    detail = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
    message = f"0/{len(nodes)} nodes are available"
    return None, f"{message}: {detail}." if detail else f"{message}."
