"""Whether a pod with new requests would still be scheduled, and whether its QoS class changes.

The updater must not evict a pod whose new requests fit no node (it would stay Pending), and an
in-place resize may not change a pod's QoS class (the kubelet refuses), so both are checked
before acting. Amounts are millicores and bytes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NodeRoom:
    name: str
    cpu_free: int  # allocatable minus the requests of the pods on it
    memory_free: int


def qos_class(containers: list[dict[str, dict[str, int]]]) -> str:
    """Guaranteed, Burstable or BestEffort, from each container's requests and limits.

    `containers`: [{"requests": {...}, "limits": {...}}]; a limit without a request counts as
    a request equal to the limit, as the API server defaults it.
    """
    any_set = False
    guaranteed = True
    for c in containers:
        limits, requests = c.get("limits") or {}, dict(c.get("requests") or {})
        for res, lim in limits.items():
            requests.setdefault(res, lim)
        if requests or limits:
            any_set = True
        for res in ("cpu", "memory"):
            if res not in limits or requests.get(res) != limits[res]:
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def place(
    nodes: list[NodeRoom], own_node: str | None, current: tuple[int, int], new: tuple[int, int]
) -> list[NodeRoom] | None:
    """The rooms after the pod moves to its new requests, or None if it fits nowhere.

    Its own node is preferred (an in-place resize stays there); elsewhere, its current requests
    are given back to its own node. Several pods updated in one run thus never count on the same
    free space twice.
    """
    order = sorted(range(len(nodes)), key=lambda i: nodes[i].name != own_node)
    for i in order:
        n = nodes[i]
        cpu, mem = n.cpu_free, n.memory_free
        if n.name == own_node:
            cpu, mem = cpu + current[0], mem + current[1]
        if new[0] <= cpu and new[1] <= mem:
            out = list(nodes)
            out[i] = NodeRoom(n.name, cpu - new[0], mem - new[1])
            if n.name != own_node:
                for j, m in enumerate(out):
                    if m.name == own_node:
                        out[j] = NodeRoom(
                            m.name, m.cpu_free + current[0], m.memory_free + current[1]
                        )
            return out
    return None
