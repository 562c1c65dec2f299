"""Places pending pods on nodes by requests against allocatable, as kube-scheduler's
NodeResourcesFit filter and LeastAllocated score do; pods that fit nowhere stay Pending. The
NodeAffinity filter takes the pod's nodeSelector and required node affinity (nodeaffinity.py);
daemon pods reach their node through it. Configured extenders (extenders.py) filter the nodes
that passed, then add `weight x score x 10` to each node's score (0-100, LeastAllocated's: the
mean free share of CPU and memory after the pod), as kube-scheduler does."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.simulator.apiserver import podutil, quantity
from app.simulator.apiserver.resources import NODE, POD
from app.simulator.apiserver.store import Store, WatchEvent
from app.simulator.control.extenders import (
    MAX_EXTENDER_PRIORITY,
    MAX_NODE_SCORE,
    ExtenderError,
    HTTPExtender,
)
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


def choose_node(
    store: Store, usage: NodeUsage, pod: dict[str, Any], extenders: Sequence[HTTPExtender] = ()
) -> tuple[str | None, str]:
    """The best node for the pod, or None and the FailedScheduling message kube-scheduler gives."""
    cpu, mem = podutil.requests(pod)
    reasons: Counter[str] = Counter()
    helpable = 0
    feasible: list[tuple[dict[str, Any], float]] = []  # node, its own score
    nodes, _ = store.scan(NODE)
    if not nodes:
        return None, "no nodes available to schedule pods"  # schedule_one.go ErrNoNodesAvailable
    for _, entry in nodes:
        node = entry.obj
        use = usage.get(node["metadata"]["name"])
        failed, resolvable = _filter(node, pod, use)
        if failed:
            reasons.update(failed)
            helpable += resolvable
            continue
        cap = allocatable(node)
        free = (cap.cpu - use.cpu - cpu) / max(cap.cpu, 1) + (cap.memory - use.memory - mem) / max(
            cap.memory, 1
        )
        feasible.append((node, free / 2 * MAX_NODE_SCORE))  # LeastAllocated, equal weights
    try:
        feasible, helpable = _extender_filter(pod, feasible, extenders, reasons, helpable)
    except ExtenderError as e:  # schedule_one.go: a failed extender fails the attempt
        return None, str(e)
    if not feasible:
        return None, fit_error(pod, len(nodes), reasons, helpable)
    if len(feasible) == 1:  # schedule_one.go: one feasible node is not scored
        return feasible[0][0]["metadata"]["name"], ""
    scores = _extender_scores(pod, [n for n, _ in feasible], extenders)
    best: tuple[float, str] | None = None
    for node, own in feasible:
        name = node["metadata"]["name"]
        total = own + scores.get(name, 0) * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
        if best is None or total > best[0]:
            best = (total, name)
    assert best is not None
    return best[1], ""


def _extender_filter(
    pod: dict[str, Any],
    feasible: list[tuple[dict[str, Any], float]],
    extenders: Sequence[HTTPExtender],
    reasons: Counter[str],
    helpable: int,
) -> tuple[list[tuple[dict[str, Any], float]], int]:
    """schedule_one.go findNodesThatPassExtenders: each extender filters what the previous left."""
    for ext in extenders:
        if not feasible:
            break
        try:
            passed, failed, unresolvable = ext.filter(pod, [n for n, _ in feasible])
        except ExtenderError:
            if ext.ignorable:
                continue
            raise
        for name in {n["metadata"]["name"] for n, _ in feasible} - set(passed):
            if name in unresolvable:  # takes precedence over FailedNodes
                reasons[unresolvable[name]] += 1
            else:
                reasons[failed.get(name, "node(s) were filtered out by an extender")] += 1
                helpable += 1
        keep = set(passed)
        feasible = [(n, s) for n, s in feasible if n["metadata"]["name"] in keep]
    return feasible, helpable


def _extender_scores(
    pod: dict[str, Any], nodes: list[dict[str, Any]], extenders: Sequence[HTTPExtender]
) -> dict[str, int]:
    """schedule_one.go prioritizeNodes: weight x score per extender, summed; errors ignored."""
    total: dict[str, int] = {}
    for ext in extenders:
        try:
            scores = ext.prioritize(pod, nodes)
        except ExtenderError:
            continue
        for name, score in scores.items():
            total[name] = total.get(name, 0) + score * ext.weight
    return total
