"""Places pending pods on nodes by requests against allocatable, as kube-scheduler's
NodeResourcesFit filter and LeastAllocated score do; pods that fit nowhere stay Pending. The
NodeAffinity filter takes the pod's nodeSelector and required node affinity (nodeaffinity.py);
daemon pods reach their node through it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from app.simulator.apiserver import podutil, quantity
from app.simulator.apiserver.resources import NODE, POD
from app.simulator.apiserver.store import Store, WatchEvent
from app.simulator.control.nodeaffinity import matches_node


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


# kube-scheduler's Filter plugins in their default order (the first that fails answers for the
# node, pkg/scheduler/framework/runtime RunFilterPlugins); all but NodeResourcesFit are
# UnschedulableAndUnresolvable, which tells preemption the node is no use.
_UNSCHEDULABLE = "node(s) were unschedulable"  # plugins/nodeunschedulable
_SELECTOR = "node(s) didn't match Pod's node affinity/selector"  # plugins/nodeaffinity
_NOT_READY = "node(s) were not ready"  # (the simulator's: real nodes get a not-ready taint)
_NO_VICTIMS = "No preemption victims found for incoming pod"
_NOT_HELPFUL = "Preemption is not helpful for scheduling"


def _filter(node: dict[str, Any], pod: dict[str, Any], use: NodeUse) -> tuple[list[str], bool]:
    """Why the node cannot take the pod (empty if it can), and whether preemption could help."""
    spec = pod.get("spec", {})
    tolerations = spec.get("tolerations") or []
    if not node_is_ready(node):
        return [_NOT_READY], False
    if node.get("spec", {}).get("unschedulable") and not podutil.tolerates(
        tolerations, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    ):
        return [_UNSCHEDULABLE], False
    for t in node.get("spec", {}).get("taints") or []:
        if t.get("key") == "node.kubernetes.io/unschedulable":
            continue  # NodeUnschedulable's business
        if t.get("effect") in ("NoSchedule", "NoExecute") and not podutil.tolerates(tolerations, t):
            # plugins/tainttoleration: the first untolerated taint, key and value
            return [
                f"node(s) had untolerated taint {{{t.get('key', '')}: {t.get('value', '')}}}"
            ], False
    if not matches_node(pod, node):  # plugins/nodeaffinity: nodeSelector and required affinity
        return [_SELECTOR], False
    # plugins/noderesources/fit.go: every insufficient resource is a reason
    cpu, mem = podutil.requests(pod)
    cap = allocatable(node)
    reasons = []
    if use.pods + 1 > cap.pods:
        reasons.append("Too many pods")
    if use.cpu + cpu > cap.cpu:
        reasons.append("Insufficient cpu")
    if use.memory + mem > cap.memory:
        reasons.append("Insufficient memory")
    return reasons, True


def _histogram(counts: Counter[str]) -> str:
    """FitError.Error's reason histogram: "<count> <reason>" strings, sorted as strings."""
    return ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))


def fit_error(pod: dict[str, Any], total: int, reasons: Counter[str], helpable: int) -> str:
    """FitError.Error (pkg/scheduler/framework/types.go) with DefaultPreemption's PostFilter
    message (plugins/defaultpreemption): the simulator never preempts, as if no node held a pod
    of lower priority, so the nodes preemption might help have no victims."""
    message = f"0/{total} nodes are available: {_histogram(reasons)}."
    if pod.get("spec", {}).get("preemptionPolicy") == "Never":
        return f"{message} preemption: not eligible due to preemptionPolicy=Never."
    preemption: Counter[str] = Counter()
    if helpable:
        preemption[_NO_VICTIMS] = helpable
    if total - helpable:
        preemption[_NOT_HELPFUL] = total - helpable
    return f"{message} preemption: 0/{total} nodes are available: {_histogram(preemption)}."


def choose_node(store: Store, usage: NodeUsage, pod: dict[str, Any]) -> tuple[str | None, str]:
    """The best node for the pod, or None and the FailedScheduling message kube-scheduler gives."""
    cpu, mem = podutil.requests(pod)
    reasons: Counter[str] = Counter()
    helpable = 0
    best: tuple[float, str] | None = None
    nodes, _ = store.scan(NODE)
    if not nodes:
        return None, "no nodes available to schedule pods"  # schedule_one.go ErrNoNodesAvailable
    for _, entry in nodes:
        node = entry.obj
        name = node["metadata"]["name"]
        use = usage.get(name)
        failed, resolvable = _filter(node, pod, use)
        if failed:
            reasons.update(failed)
            helpable += resolvable
            continue
        cap = allocatable(node)
        free = (cap.cpu - use.cpu - cpu) / max(cap.cpu, 1) + (cap.memory - use.memory - mem) / max(
            cap.memory, 1
        )
        if best is None or free > best[0]:
            best = (free, name)
    if best is not None:
        return best[1], ""
    return None, fit_error(pod, len(nodes), reasons, helpable)
