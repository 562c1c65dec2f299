"""Recommendations that fit a node, no I/O (kubernetes/autoscaler #4515, #7147, AEP #7397).

A pod whose requests are larger than what every node it may run on can give stays Pending: the
scheduler finds no node. So the recommendation of a workload is capped at the largest such
node: a node the pod could be scheduled on (Ready, not cordoned, its nodeSelector, required node
affinity and tolerations against the node's labels and NoSchedule/NoExecute taints: the rules of
app.core.sizing.fit), less what the DaemonSets take there (their pods run on every node they
admit, before any other pod). When the pod's requests fit no such node, they are brought down to
the one that keeps most of them (the least relative cut, summed over CPU and memory): each
resource at most that node's room, less what the pod's containers without a recommendation
request, shared among the recommended containers in proportion to their targets.

What is not read: inter-pod affinity, topology spread, pod overhead, pod-level resources and
init containers (which run before the app containers); nodes the cluster autoscaler could add
are unknown here. A workload with no node it may run on is not capped (nothing is known).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from app.core.nodes import NodeView
from app.core.pods import PodView
from app.core.quantity import amount_or_none, format_quantity
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.sizing.fit import BLOCKING_EFFECTS, NodeRoom, Placement, admits

Amounts = tuple[int, int]  # millicores, bytes

# The tolerations the DaemonSet controller adds to every pod it creates (kubernetes
# pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations): its pods go on
# nodes not ready, unreachable, under pressure or cordoned. Network-unavailable is added only to
# host-network pods and is left out here.
DAEMON_TOLERATIONS: tuple[Mapping[str, str], ...] = tuple(
    {"key": f"node.kubernetes.io/{key}", "operator": "Exists", "effect": effect}
    for key, effect in (
        ("not-ready", "NoExecute"),
        ("unreachable", "NoExecute"),
        ("disk-pressure", "NoSchedule"),
        ("memory-pressure", "NoSchedule"),
        ("pid-pressure", "NoSchedule"),
        ("unschedulable", "NoSchedule"),
    )
)


@dataclass(frozen=True)
class DaemonTemplate:
    """What a DaemonSet's pods request (app containers and sidecars) and where they may run."""

    namespace: str
    name: str
    placement: Placement
    requests: Amounts


@dataclass(frozen=True)
class NodeCap:
    """The pod's requests brought down to fit `node`: at most `room` in all."""

    node: str
    room: Amounts  # the node's allocatable less its DaemonSets' requests
    need: Amounts  # what the pod would request with the recommendation


def daemon_use(
    nodes: Iterable[NodeView], daemons: Iterable[DaemonTemplate]
) -> dict[str, dict[tuple[str, str], Amounts]]:
    """Per node, what each DaemonSet whose pods may run there requests on it."""
    rooms = [_room(n, (0, 0)) for n in nodes]
    out: dict[str, dict[tuple[str, str], Amounts]] = {}
    for d in daemons:
        placement = replace(d.placement, tolerations=d.placement.tolerations + DAEMON_TOLERATIONS)
        for room in rooms:
            if admits(room, placement):
                out.setdefault(room.name, {})[(d.namespace, d.name)] = d.requests
    return out


def container_requests(pod: PodView) -> dict[str, Amounts]:
    """Each app container's (and sidecar's) requests, 0 where unset."""
    return {
        c.name: (c.resources.cpu_request or 0, c.resources.memory_request or 0)
        for c in pod.app_containers()
    }


def node_rooms(
    nodes: Iterable[NodeView],
    use: Mapping[str, Mapping[tuple[str, str], Amounts]],
    own: tuple[str, str] | None = None,
) -> list[NodeRoom]:
    """The nodes a new pod may be scheduled on (Ready, not cordoned, allocatable known), each
    with its allocatable less the requests of its DaemonSets (but `own`, the workload's own
    DaemonSet, whose pod is the one being sized)."""
    out = []
    for n in nodes:
        if not n.takes_pods or n.cpu_allocatable is None or n.memory_allocatable is None:
            continue
        taken = [a for d, a in use.get(n.name, {}).items() if d != own]
        out.append(_room(n, (sum(a[0] for a in taken), sum(a[1] for a in taken))))
    return out


def daemon_room(
    n: NodeView, use: Mapping[str, Mapping[tuple[str, str], Amounts]], own: tuple[str, str]
) -> NodeRoom | None:
    """The room a DaemonSet's (`own`) pod has on its node `n`: the node's allocatable less the
    other DaemonSets there (None when its allocatable is unknown). Not tied to the node taking
    new pods: the DaemonSet controller puts its pods on cordoned and not-ready nodes too."""
    if n.cpu_allocatable is None or n.memory_allocatable is None:
        return None
    taken = [a for d, a in use.get(n.name, {}).items() if d != own]
    return _room(n, (sum(a[0] for a in taken), sum(a[1] for a in taken)))


def _room(n: NodeView, taken: Amounts) -> NodeRoom:
    blocking = tuple(t for t in n.taints if t[2] in BLOCKING_EFFECTS)
    cpu, memory = n.cpu_allocatable or 0, n.memory_allocatable or 0
    return NodeRoom(n.name, max(cpu - taken[0], 0), max(memory - taken[1], 0), blocking, n.labels)


def smallest_room(rooms: Iterable[NodeRoom]) -> Amounts | None:
    """What every one of `rooms` can give (a pod needing no more fits on each): a quick test
    before the placement of a pod is read."""
    listed = list(rooms)
    if not listed:
        return None
    return min(r.cpu_free for r in listed), min(r.memory_free for r in listed)


def largest_fit(rooms: Iterable[NodeRoom], placement: Placement, need: Amounts) -> NodeCap | None:
    """None when `need` fits some node the pod may run on, or when it may run on none (nothing
    known to cap at); else the node keeping most of it."""
    eligible = [r for r in rooms if admits(r, placement)]
    if not eligible or any(need[0] <= r.cpu_free and need[1] <= r.memory_free for r in eligible):
        return None

    def kept(r: NodeRoom) -> float:
        cpu = min(r.cpu_free / need[0], 1.0) if need[0] else 1.0
        memory = min(r.memory_free / need[1], 1.0) if need[1] else 1.0
        return cpu + memory

    best = max(sorted(eligible, key=lambda r: r.name), key=kept)  # ties: the first name
    return NodeCap(best.name, (best.cpu_free, best.memory_free), need)


def share(targets: Mapping[str, Amounts], fixed: Amounts, room: Amounts) -> dict[str, Amounts]:
    """The targets brought within `room` less `fixed` (what the other containers request), per
    resource in proportion to each target (rounded down); a resource that fits is unchanged."""
    out = {name: list(t) for name, t in targets.items()}
    for i in (0, 1):
        total = sum(t[i] for t in targets.values())
        left = max(room[i] - fixed[i], 0)
        if total <= left:
            continue
        for name, t in targets.items():
            out[name][i] = t[i] * left // total
    return {name: (v[0], v[1]) for name, v in out.items()}


def cap_to_node(
    recs: Mapping[str, Recommendation],
    requests: Mapping[str, Amounts],
    placement: Placement | Callable[[], Placement],
    rooms: list[NodeRoom],
    floor: Amounts | None = None,
) -> tuple[Mapping[str, Recommendation], str | None]:
    """The recommendations of a pod's containers capped to fit a node (the same mapping when
    they fit), and why when they were capped. `requests`: what each app container of the pod
    requests now (the ones without a recommendation keep it); `floor`: smallest_room(rooms),
    when the caller keeps it for many pods; `placement` may be a function reading it."""
    if not recs or not rooms:
        return recs, None
    # what the pod would request: the others' requests (`fixed`) and the targets; one loop
    # each, no dict, for the common answer (it fits every node): the recommender asks it of
    # each of its 15,000 workloads every run
    fixed_cpu = fixed_memory = 0
    for name, (cpu, memory) in requests.items():
        if name not in recs:
            fixed_cpu += cpu
            fixed_memory += memory
    need_cpu, need_memory = fixed_cpu, fixed_memory
    for r in recs.values():
        need_cpu += r.target.cpu
        need_memory += r.target.memory
    floor = floor or smallest_room(rooms)
    if floor is not None and need_cpu <= floor[0] and need_memory <= floor[1]:
        return recs, None  # fits on every node: no placement to read
    targets = {n: (r.target.cpu, r.target.memory) for n, r in recs.items()}
    fixed, need = (fixed_cpu, fixed_memory), (need_cpu, need_memory)
    if callable(placement):  # read only now, for a pod that may not fit every node
        placement = placement()
    cap = largest_fit(rooms, placement, need)
    if cap is None:
        return recs, None
    shared = share(targets, fixed, cap.room)
    out: dict[str, Recommendation] = {}
    for name, rec in recs.items():
        cpu, memory = shared[name]
        if (cpu, memory) == targets[name]:
            out[name] = rec
            continue
        out[name] = Recommendation(
            target=Resources(cpu, memory),
            lower_bound=_at_most(rec.lower_bound, cpu, memory),
            upper_bound=_at_most(rec.upper_bound, cpu, memory),
            uncapped_target=rec.uncapped_target,
            reason="; ".join(filter(None, (rec.reason, f"capped to fit node {cap.node}"))),
        )
    return out, describe(cap)


def _at_most(r: Resources, cpu: int, memory: int) -> Resources:
    return Resources(min(r.cpu, cpu), min(r.memory, memory))


def describe(cap: NodeCap) -> str:
    """The condition's message: what the pod would request, and the node it was capped to."""
    need, room = _quantities(cap.need), _quantities(cap.room)
    return (
        f"the pod would request {need}: more than any node it may run on has; capped to node "
        f"{cap.node} ({room} allocatable less its DaemonSets)"
    )


def _quantities(a: Amounts) -> str:
    return f"cpu {format_quantity('cpu', a[0])}, memory {format_quantity('memory', a[1])}"


def spec_requests(spec: Mapping[str, Any]) -> dict[str, Amounts]:
    """Each app container's and sidecar's requests in a pod spec (JSON), 0 where unset or
    malformed: what the webhook reads of a pod it is asked about."""
    out: dict[str, Amounts] = {}
    init = spec.get("initContainers")
    sidecars = [c for c in init if _is_sidecar(c)] if isinstance(init, list) else []
    containers = spec.get("containers")
    for c in [*(containers if isinstance(containers, list) else []), *sidecars]:
        if not isinstance(c, Mapping) or not isinstance(c.get("name"), str):
            continue
        resources = c.get("resources")
        requests = resources.get("requests") if isinstance(resources, Mapping) else None
        requests = requests if isinstance(requests, Mapping) else {}
        out[c["name"]] = (
            amount_or_none("cpu", requests.get("cpu")) or 0,
            amount_or_none("memory", requests.get("memory")) or 0,
        )
    return out


def _is_sidecar(c: Any) -> bool:
    return isinstance(c, Mapping) and c.get("restartPolicy") == "Always"


def daemon_template(obj: Mapping[str, Any]) -> DaemonTemplate | None:
    """A DaemonSet object (JSON) as a DaemonTemplate; None without a pod template."""
    meta, spec = obj.get("metadata"), obj.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    pod_spec = template.get("spec") if isinstance(template, Mapping) else None
    if not isinstance(meta, Mapping) or not isinstance(pod_spec, Mapping):
        return None
    requests = spec_requests(pod_spec).values()
    return DaemonTemplate(
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
        Placement.of(pod_spec),
        (sum(a[0] for a in requests), sum(a[1] for a in requests)),
    )
