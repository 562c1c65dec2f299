"""Whether a pod with new requests would still be scheduled, and whether its QoS class changes.

The updater must not evict a pod whose new requests fit no node (it would stay Pending), and an
in-place resize may not change a pod's QoS class (the kubelet refuses), so both are checked
before acting. Amounts are millicores and bytes.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.wire import section

# Taint effects that keep a pod off a node; PreferNoSchedule only discourages the scheduler.
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class NodeRoom:
    name: str
    cpu_free: int  # allocatable minus the requests of the pods on it
    memory_free: int
    taints: tuple[tuple[str, str, str], ...] = ()  # (key, value, effect), blocking effects only
    labels: tuple[tuple[str, str], ...] = ()


class Rooms(list[NodeRoom]):
    """Rooms that know each node's position, as they were built: `moves` finds a pod's own node
    without scanning every node (the updater calls it for each pod it updates; at 5000 nodes
    that scan was most of a dry run's planning). A position is trusted only when the room there
    still has that name; otherwise the list is scanned."""

    def __init__(self, rooms: list[NodeRoom]) -> None:
        super().__init__(rooms)
        self.positions = {n.name: i for i, n in enumerate(rooms)}

    def position(self, name: str) -> int | None:
        i = self.positions.get(name)
        if i is not None and i < len(self) and self[i].name == name:
            return i
        return next((i for i, n in enumerate(self) if n.name == name), None)


@dataclass(frozen=True)
class Placement:
    """What of a pod's spec decides where it may run: tolerations, nodeSelector, and the terms of
    its required node affinity (`None`: no required affinity). Preferred affinity only ranks
    nodes, and inter-pod affinity and topology spread are not read: a pod held by those may be
    judged to fit where the scheduler would not put it."""

    tolerations: tuple[Mapping[str, Any], ...] = ()
    node_selector: tuple[tuple[str, str], ...] = ()
    affinity_terms: tuple[Mapping[str, Any], ...] | None = None

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> Placement:
        tolerations = tuple(t for t in spec.get("tolerations") or () if isinstance(t, Mapping))
        selector = spec.get("nodeSelector") or {}
        pairs = selector.items() if isinstance(selector, Mapping) else ()
        required = section(
            section(section(spec, "affinity"), "nodeAffinity"),
            "requiredDuringSchedulingIgnoredDuringExecution",
        )
        terms = None
        if required:
            raw = required.get("nodeSelectorTerms")
            terms = tuple(t for t in raw if isinstance(t, Mapping)) if isinstance(raw, list) else ()
        return cls(tolerations, tuple(sorted((str(k), str(v)) for k, v in pairs)), terms)


def _requirement_holds(req: Any, values_of: Mapping[str, str], numeric: bool) -> bool:
    """One matchExpressions (or matchFields) entry against a node's labels (or fields)."""
    if not isinstance(req, Mapping):
        return False
    key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
    if not isinstance(key, str) or not isinstance(values, list):
        return False
    present = key in values_of
    if op == "In":
        return present and values_of[key] in values
    if op == "NotIn":
        return not present or values_of[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and numeric and present and len(values) == 1:
        try:
            have, bound = int(values_of[key]), int(values[0])
        except (TypeError, ValueError):
            return False
        return have > bound if op == "Gt" else have < bound
    return False  # an unknown operator matches nothing, as the scheduler's parser rejects it


def matches_term(term: Mapping[str, Any], name: str, labels: Mapping[str, str]) -> bool:
    """A nodeSelectorTerm: every matchExpressions entry holds for the labels and every
    matchFields entry for the node's fields (only `metadata.name` exists). A term with neither
    matches no node."""
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not isinstance(expressions, list) or not isinstance(fields, list):
        return False
    if not expressions and not fields:
        return False
    return all(_requirement_holds(r, labels, True) for r in expressions) and all(
        _requirement_holds(r, {"metadata.name": name}, False) for r in fields
    )


def tolerates(toleration: Mapping[str, Any], taint: tuple[str, str, str]) -> bool:
    """Kubernetes' rule: the effects match (an empty toleration effect matches all), and either
    operator Exists with the same key (an empty key matches every key) or Equal (the default)
    with the same key and value."""
    key, value, effect = taint
    if toleration.get("effect") and toleration.get("effect") != effect:
        return False
    if toleration.get("operator", "Equal") == "Exists":
        return not toleration.get("key") or toleration.get("key") == key
    return bool(toleration.get("key") == key and (toleration.get("value") or "") == value)


def admits(node: NodeRoom, placement: Placement) -> bool:
    """The node's labels match the nodeSelector and one of the required affinity terms (terms
    are ORed), and every blocking taint is tolerated."""
    labels = dict(node.labels)
    if any(labels.get(k) != v for k, v in placement.node_selector):
        return False
    terms = placement.affinity_terms
    if terms is not None and not any(matches_term(t, node.name, labels) for t in terms):
        return False
    return all(any(tolerates(t, taint) for t in placement.tolerations) for taint in node.taints)


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


def with_moves(nodes: list[NodeRoom], changed: dict[int, NodeRoom]) -> list[NodeRoom]:
    """A copy of `nodes` with the rooms `moves` changed put in their places."""
    out = list(nodes)
    for i, room in changed.items():
        out[i] = room
    return out


def moves(
    nodes: list[NodeRoom],
    own_node: str | None,
    current: tuple[int, int],
    new: tuple[int, int],
    placement: Placement | None = None,
) -> dict[int, NodeRoom] | None:
    """Where a pod moving from `current` to `new` requests goes: the changed rooms by their
    position in `nodes` (one or two), or None if it fits nowhere.

    Its own node is preferred (an in-place resize stays there; the pod runs there already, so its
    taints and labels are not checked again); another node must admit the pod (`placement`:
    tolerations, nodeSelector, required node affinity) and then its current requests are given
    back to its own node. Applied to the rooms (`with_moves`, or in place as the updater does),
    several pods updated in one run never count on the same free space twice."""
    placement = placement or Placement()
    # Its own node first, then the others in order: one pass to find it, none to sort (the
    # updater calls this for every pod it updates; at 5000 nodes a sort per call was most of
    # a run's time).
    if isinstance(nodes, Rooms) and own_node is not None:
        own = nodes.position(own_node)
    else:
        own = next((i for i, n in enumerate(nodes) if n.name == own_node), None)
    others = (i for i in range(len(nodes)) if i != own)
    for i in itertools.chain(() if own is None else (own,), others):
        n = nodes[i]
        if i != own and not admits(n, placement):
            continue
        cpu, mem = n.cpu_free, n.memory_free
        if i == own:
            cpu, mem = cpu + current[0], mem + current[1]
        if new[0] <= cpu and new[1] <= mem:
            # built field by field (dataclasses.replace looks the fields up on every call)
            out = {i: NodeRoom(n.name, cpu - new[0], mem - new[1], n.taints, n.labels)}
            if own is not None and i != own:
                m = nodes[own]
                out[own] = NodeRoom(
                    m.name,
                    m.cpu_free + current[0],
                    m.memory_free + current[1],
                    m.taints,
                    m.labels,
                )
            return out
    return None
