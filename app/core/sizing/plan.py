"""The updater's planning, no I/O: which running pods to update, in what order, where they fit,
and whether a resize can be sent or must fall back to an eviction.

app.jobs.updater gathers the inputs (the caches, the snapshot, the LimitRanges, the clock), gates
the run, and acts on what this module decides (resize, evict, audit, Events). Each function here is
a plain function of pod and node views (app.core.pods, app.core.nodes) and core values, so the
decisions are unit-tested directly.

- `node_rooms`: each schedulable, Ready node's allocatable minus the requests of its pods.
- `workload_candidates`: the pods of one workload that qualify (app.core.sizing.priority), each with
  the values the webhook would give it (app.core.sizing.patch.size_pod), scale-ups and the farthest
  first.
- `placement`: the rooms after the pod takes its new requests, or None when it fits on no node.
- `not_resizable`: why kube-apiserver or the kubelet would refuse the resize, known beforehand.
- `resize_body` (an app.core.bodies.ResizeBody), `change_details`, `describe`, `holds`,
  `stuck_resize`: what is sent, recorded and watched afterwards.

Pods with pod-level resources (app.core.sizing.podlevel): a container sharing the pod's budget
(no request of its own) is judged through the pod-level values, one more view named
`spec.resources` (its request against the sum of the containers' bounds); the pod counts on its
node by its pod-level requests, as the scheduler counts it; and it is resized in place, its
`spec.resources` in the same resize, only where the cluster's release and the pod's node allow it
(KEP-5419, InPlacePodLevelResourcesVerticalScaling: app.core.sizing.podlevel_resize), else
evicted as any pod Kubernetes would refuse to resize.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.core.bodies import ContainerResize, PodLevelResize, ResizeBody
from app.core.nodes import NodeView
from app.core.pods import ContainerResources, PodView
from app.core.policy import Policy
from app.core.quantity import parse_amount, readable
from app.core.recommendation import Recommendation, policy_for_container
from app.core.sizing import podlevel_resize
from app.core.sizing.boost import boosted
from app.core.sizing.fit import BLOCKING_EFFECTS, NodeRoom, Placement, Rooms, moves, with_moves
from app.core.sizing.limitrange import LimitRangeItem
from app.core.sizing.patch import PodInvalid, PodSizing, size_pod
from app.core.sizing.patch_cache import ByRelease, input_key, shared_key
from app.core.sizing.priority import (
    ContainerView,
    PodPriority,
    UpdaterSettings,
    changes_qos,
    is_quick_oom,
    pod_priority,
    resize_state,
    update_reason,
)
from app.core.sizing.requirements import admits
from app.core.sizing.resize_rules import ResizeCheck, known_refusal
from app.core.workload_key import WorkloadKey

PodKeys = dict[int, Hashable | None]  # id(pod) -> shared_key(pod.wire), computed once a run
Sized = tuple[PodSizing, PodPriority] | None  # a pod shape's sizing and priority; None: no update
Values = dict[str, dict[str, dict[str, int]]]  # container -> requests/limits -> resource -> amount
POD_VIEW = "spec.resources"  # the pod-level values, beside the containers in views and records


@dataclass
class Candidate:
    """A pod that qualifies for an update, with the patch that would update it."""

    pod: PodView
    workload: WorkloadKey
    priority: PodPriority
    reason: str
    patch: PodSizing
    pending: bool  # not Running yet: it counts against the budget only as unavailable


def pod_requests(
    pod: PodView, new: Mapping[str, Mapping[str, int]] | None = None
) -> tuple[int, int]:
    """The pod's CPU and memory requests as the scheduler counts them: a pod-level request where
    the pod sets one, else the sum of its containers'. `new`: requests that replace the pod's
    (by container name, and POD_VIEW for the pod-level ones)."""
    new = new or {}
    totals = [0, 0]
    for i, res in enumerate(("cpu", "memory")):
        level = pod.pod_resources.requests() if pod.pod_resources is not None else {}
        if res in level:
            totals[i] = new.get(POD_VIEW, {}).get(res, level[res])
            continue
        for name, r in pod.resources().items():
            current = r.requests().get(res)
            totals[i] += new.get(name, {}).get(res, current or 0)
    return totals[0], totals[1]


def node_rooms(
    nodes: Iterable[NodeView], pods: Iterable[PodView], keys: PodKeys | None = None
) -> list[NodeRoom]:
    """Schedulable Ready nodes with what their non-terminal pods leave of their allocatable.
    The requests of pods whose parts are the same objects (shared_key: one template in the pod
    cache) are summed once; the first pod of each key is kept, so its ids stay its own. `keys`,
    when given, is filled with the shared_key of each pod counted, by id(pod), for
    workload_candidates to take instead of computing it again (the caller keeps the pods alive
    while it uses them: an id names one object only while it lives)."""
    used: dict[str, list[int]] = {}
    shapes: dict[Hashable, tuple[PodView, tuple[int, int]]] = {}
    for pod in pods:
        if not pod.node_name or pod.phase in ("Succeeded", "Failed"):
            continue
        u = used.setdefault(pod.node_name, [0, 0])
        key = shared_key(pod.wire)
        if keys is not None:
            keys[id(pod)] = key
        found = shapes.get(key) if key is not None else None
        if found is None:
            found = (pod, pod_requests(pod))
            if key is not None:
                shapes[key] = found
        cpu, memory = found[1]
        u[0] += cpu
        u[1] += memory
    rooms = []
    for n in nodes:
        if not n.takes_pods or n.cpu_allocatable is None or n.memory_allocatable is None:
            continue
        u = used.get(n.name, [0, 0])
        taints = tuple(t for t in n.taints if t[2] in BLOCKING_EFFECTS)
        rooms.append(
            NodeRoom(
                n.name, n.cpu_allocatable - u[0], n.memory_allocatable - u[1], taints, n.labels
            )
        )
    return Rooms(rooms)  # knows where each node is: the updater's fit checks look it up


def configured_replicas(owner: Mapping[str, Any] | None, pods: Sequence[PodView]) -> int:
    """The owner's spec.replicas; the number of its pods when it has none (or is unknown)."""
    replicas = ((owner or {}).get("spec") or {}).get("replicas")
    return int(replicas) if isinstance(replicas, int) else len(pods)


def pod_views(
    pod: PodView,
    policy: Policy,
    recs: Mapping[str, Recommendation],
    excluded: Mapping[str, frozenset[str]],
    patch: PodSizing,
) -> list[ContainerView]:
    """The controlled containers, each against what the patch would set: the target after the
    policy's and the LimitRanges' caps. The bounds widen to take that value in, so a pod that
    holds the best it is allowed is never "outside the recommended range"."""
    resources = pod.resources()
    sized = {u.name: u.requests for u in patch.updates}
    views = []
    level = pod.pod_resources
    at_pod_level = set(level.requests()) | set(level.limits()) if level is not None else set()
    for c in pod.app_containers():
        name = c.name
        rec, cp = recs.get(name), policy_for_container(list(policy.container_policies), name)
        if rec is None or cp.mode == "Off":
            continue
        cur = resources.get(name)
        own = set(cur.requests()) | set(cur.limits()) if cur is not None else set()
        controlled = [
            r
            for r in cp.controlled_resources
            if r not in excluded.get(name, ()) and (r in own or r not in at_pod_level)
        ]  # a resource it shares from the pod-level budget is judged in the pod's view
        if not controlled:
            continue
        requests = cur.requests() if cur is not None else {}
        # What the patch leaves alone stays as it is: that is its target here.
        new = {**requests, **sized.get(name, {})}
        target = {r: new.get(r, getattr(rec.target, r)) for r in controlled}
        views.append(
            ContainerView(
                name,
                {r: requests[r] for r in controlled if r in requests},
                target,
                {r: min(getattr(rec.lower_bound, r), target[r]) for r in controlled},
                {r: max(getattr(rec.upper_bound, r), target[r]) for r in controlled},
            )
        )
    pod_view = _pod_level_view(pod, recs, patch)
    return views + ([pod_view] if pod_view is not None else [])


def _pod_level_view(
    pod: PodView, recs: Mapping[str, Recommendation], patch: PodSizing
) -> ContainerView | None:
    """The pod-level values the patch changes, as one more view: the pod-level request against
    the new one, within the sum of the containers' bounds (each container's own request where
    it has no recommendation), widened to take the new value in."""
    update = patch.pod_level
    if update is None or not update.requests:
        return None
    resources = pod.resources()
    lower: dict[str, int] = {}
    upper: dict[str, int] = {}
    for res, target in update.requests.items():
        lo = hi = 0
        for c in pod.app_containers():
            rec = recs.get(c.name)
            cur = resources.get(c.name)
            own = (cur.requests().get(res) if cur is not None else None) or 0
            lo += getattr(rec.lower_bound, res) if rec is not None else own
            hi += getattr(rec.upper_bound, res) if rec is not None else own
        lower[res], upper[res] = min(lo, target), max(hi, target)
    return ContainerView(
        POD_VIEW,
        {r: v for r, v in update.previous_requests.items() if r in update.requests},
        dict(update.requests),
        lower,
        upper,
    )


def changes_requests(patch: PodSizing) -> bool:
    """The patch changes a request: a container's, or the pod-level one."""
    level = patch.pod_level
    return any(u.requests != u.previous_requests for u in patch.updates) or (
        level is not None and bool(level.requests)
    )


def quick_oom(pod: PodView, settings: UpdaterSettings) -> bool:
    """A container of the pod was OOM-killed soon after it started (VPA's quick OOM)."""
    for cs in pod.statuses:
        term = cs.last_termination
        if (
            not cs.init
            and term is not None
            and is_quick_oom(term.started, term.finished, term.reason, settings)
        ):
            return True
    return False


def workload_candidates(
    w: WorkloadKey,
    pods: Iterable[PodView],
    policy: Policy,
    recs: Mapping[str, Recommendation],
    excluded: Mapping[str, frozenset[str]] | None,
    ranges: Sequence[LimitRangeItem],
    now: float,
    settings: UpdaterSettings,
    keys: PodKeys | None = None,
    memo: SizedMemo | None = None,
) -> list[Candidate]:
    """The pods of `w` that qualify for an update, in the order to take them: each has a patch
    that changes a request (the webhook would give it something else), an update reason, and
    meets the policy's evictionRequirements (app.core.sizing.requirements). A pod still carrying
    its CPU startup boost is left to the boost (app.core.sizing.boost); the policy's
    evictAfterOOMSeconds replaces the global quick-OOM time. `keys`: the pods' shared_key by
    id(pod), as node_rooms filled it; a pod not in it has its key computed here. `memo`: the
    patches and priorities of earlier runs (SizedMemo); without it, a memo of this call alone
    (pods of one template, equal by value, share their patch all the same)."""
    if policy.evict_after_oom_seconds is not None:
        settings = replace(settings, quick_oom_seconds=float(policy.evict_after_oom_seconds))
    candidates = []
    memo = memo if memo is not None else SizedMemo()  # equal pods share their patch
    # ... and all that follows from it: pods whose parts are the same objects (shared_key) get
    # the same (patch, priority) and are boosted alike (the boost is an annotation, a part); the
    # first pod of each key is kept, so its ids stay its own.
    shapes: dict[Hashable, tuple[PodView, bool, Sized]] = {}
    for pod in pods:
        if pod.deleting:
            continue
        key = keys[id(pod)] if keys is not None and id(pod) in keys else shared_key(pod.wire)
        found = shapes.get(key) if key is not None else None
        if found is None:
            left = bool(boosted(pod))  # left to its boost's removal
            sized_now = None if left else memo.sized(pod, policy, recs, excluded, ranges)
            found = (pod, left, sized_now)
            if key is not None:
                shapes[key] = found
        _, left, sized = found
        if left or sized is None:
            continue
        patch, prio = sized
        reason = update_reason(prio, pod.start_time, now, quick_oom(pod, settings), settings)
        if reason is not None:
            candidates.append(Candidate(pod, w, prio, reason, patch, not pod.is_running))
    candidates.sort(key=lambda c: c.priority.sort_key())
    return candidates


class SizedMemo(ByRelease):
    """The ranking's sizing and priority of each pod shape, kept from one updater run to the next.

    Both are functions of what `pod_inputs` holds of a pod (its containers' names, restart
    policies and resources, its pod-level resources, the annotations sizing reads) and of
    the policy, recommendations, exclusions and LimitRanges it is sized by: `_sized` reads
    nothing else. Those four are keyed by identity, and an entry holds them, so an id names the
    same object for as long as the entry lives. The updater carries its snapshot forward
    (app.store.snapshot.carry_forward: what did not change is the previous run's object) and the
    LimitRange cache keeps each namespace's items until they change, so a workload whose
    recommendation, policy and pods did not change between two runs is ranked without sizing it
    again (the patch of each of 13,500 templates was most of a dry run's planning at 150,000
    pods, issue 22; size_pod, which it is now, builds no JSON Patch). Entries not used in a run
    are dropped when it ends (`end_run`): the memo holds at most one run's shapes."""

    def __init__(self) -> None:
        self._previous: dict[Hashable, tuple[tuple[object, ...], Sized]] = {}
        self._current: dict[Hashable, tuple[tuple[object, ...], Sized]] = {}
        self.hits = self.misses = 0

    def _forget(self) -> None:  # the release changed (the updater sets it once it knows)
        self._previous, self._current = {}, {}

    def sized(
        self,
        pod: PodView,
        policy: Policy,
        recs: Mapping[str, Recommendation],
        excluded: Mapping[str, frozenset[str]] | None,
        ranges: Sequence[LimitRangeItem],
    ) -> Sized:
        refs = (policy, recs, excluded, ranges)
        key = input_key(pod.wire, refs)
        if key is None:  # not JSON values: never kept
            return _sized(pod, policy, recs, excluded, ranges, self._release)
        found = self._current.get(key) or self._previous.get(key)
        if found is None:
            self.misses += 1
            found = (refs, _sized(pod, policy, recs, excluded, ranges, self._release))
        else:
            self.hits += 1
        self._current[key] = found
        return found[1]

    def end_run(self) -> None:
        """Keeps what this run used, for the next; drops the rest."""
        self._previous, self._current = self._current, {}

    def __len__(self) -> int:
        return len(self._previous.keys() | self._current.keys())


def _sized(
    pod: PodView,
    policy: Policy,
    recs: Mapping[str, Recommendation],
    excluded: Mapping[str, frozenset[str]] | None,
    ranges: Sequence[LimitRangeItem],
    release: int | None = None,
) -> Sized:
    """The pod's sizing (what the webhook's patch would do) and priority; None when it does not
    qualify whatever its age: the sizing is refused or changes no request, or the policy's
    evictionRequirements are not met. Reads only what shared_key covers (containers, init
    containers, pod-level resources, annotations) and pod_inputs holds (SizedMemo keeps its
    answer)."""
    try:
        patch = size_pod(
            pod.wire, recs, policy, ranges, parse=parse_amount, excluded=excluded, release=release
        )
    except PodInvalid:
        return None
    if not changes_requests(patch):
        return None  # it already holds what the webhook would give it
    views = pod_views(pod, policy, recs, excluded or {}, patch)
    current = dict(pod.resources())
    if pod.pod_resources is not None:
        current[POD_VIEW] = pod.pod_resources
    if not views or not admits(policy.eviction_requirements, views, current):
        return None
    return patch, pod_priority(views)


def placement(c: Candidate, rooms: list[NodeRoom]) -> list[NodeRoom] | None:
    """The rooms once the pod holds its new requests (on its node, or as a recreated pod
    elsewhere); None when they fit on no node."""
    changed = placement_moves(c, rooms)
    return None if changed is None else with_moves(rooms, changed)


def placement_moves(c: Candidate, rooms: list[NodeRoom]) -> dict[int, NodeRoom] | None:
    """What `placement` changes: the new rooms by position (fit.moves), None when they fit on
    no node."""
    new: dict[str, Mapping[str, int]] = {u.name: u.requests for u in c.patch.updates}
    if c.patch.pod_level is not None:
        new[POD_VIEW] = c.patch.pod_level.requests
    current, wanted = pod_requests(c.pod), pod_requests(c.pod, new)
    return moves(rooms, c.pod.node_name, current, wanted, Placement.of(c.pod.spec))


def _amounts(res: ContainerResources) -> dict[str, dict[str, int]]:
    return {"requests": res.requests(), "limits": res.limits()}


def qos_change(c: Candidate, live: PodView) -> tuple[str, str] | None:
    """(before, after) when the resize would change the pod's QoS class, else None. `live`: the
    pod as the API server has it (init containers and pod-level resources count)."""
    current = {name: _amounts(res) for name, res in live.resources().items()}
    # Init containers that are not sidecars cannot be resized but count for the class.
    others = [_amounts(x.resources) for x in live.plain_init_containers()]
    pod_level = _amounts(live.pod_resources) if live.pod_resources is not None else None
    updates = {u.name: {"requests": u.requests, "limits": u.limits} for u in c.patch.updates}
    level = c.patch.pod_level
    level_update = {"requests": level.requests, "limits": level.limits} if level else None
    return changes_qos(current, updates, others, pod_level, level_update)


def pod_level_not_resizable(
    c: Candidate,
    live: PodView,
    server_minor: int | None,
    node_features: Collection[str] | None = None,
) -> str | None:
    """Why Kubernetes would refuse to resize this pod, which sets pod-level resources (or whose
    patch changes them), in place: the release or its node cannot (podlevel_resize); None for
    a pod without them."""
    level = live.pod_resources
    if not ((level is not None and (level.requests() or level.limits())) or c.patch.pod_level):
        return None
    changes = c.patch.pod_level is not None
    node = live.node_name or ""
    return podlevel_resize.pod_level_refusal(server_minor, changes, node, node_features)


def not_resizable(
    c: Candidate,
    live: PodView,
    server_minor: int | None,
    node_features: Collection[str] | None = None,
) -> str | None:
    """Why Kubernetes would refuse this resize, known before sending it: a QoS class change
    (every release), or what the cluster's release refuses (app.core.sizing.resize_rules), and
    for a pod with pod-level resources what the release and its node allow
    (app.core.sizing.podlevel_resize). `node_features`: the status.declaredFeatures of the pod's
    node (None: not known)."""
    why = pod_level_not_resizable(c, live, server_minor, node_features)
    if why is not None:
        return why
    qos = qos_change(c, live)
    if qos is not None:
        return f"resize would change the QoS class {qos[0]} -> {qos[1]}"
    policies = {x.name: x.memory_resize_policy for x in live.app_containers()}
    checks = [
        ResizeCheck(
            u.name,
            u.previous_limits.get("memory"),
            u.limits.get("memory", u.previous_limits.get("memory")),
            policies.get(u.name),
        )
        for u in c.patch.updates
    ]
    return known_refusal(server_minor, checks)


def resize_body(c: Candidate) -> ResizeBody:
    """The resize of the candidate's patch: a native sidecar lives under spec.initContainers (its
    ContainerUpdate.path says so), and there it must be addressed; the pod-level values it
    changes go under spec.resources."""
    containers, init_containers = [], []
    for u in c.patch.updates:
        entry = ContainerResize(u.name, dict(u.requests), dict(u.limits))
        if u.path.startswith("/spec/initContainers/"):
            init_containers.append(entry)
        else:
            containers.append(entry)
    level = c.patch.pod_level
    pod_level = PodLevelResize(dict(level.requests), dict(level.limits)) if level else None
    return ResizeBody(tuple(containers), tuple(init_containers), pod_level)


def change_details(c: Candidate) -> dict[str, Any]:
    """The audit row's details: the workload and each container's values before and after."""
    before = {
        u.name: {"requests": u.previous_requests, "limits": u.previous_limits}
        for u in c.patch.updates
    }
    after = {u.name: {"requests": u.requests, "limits": u.limits} for u in c.patch.updates}
    level = c.patch.pod_level
    if level is not None:
        before[POD_VIEW] = {"requests": level.previous_requests, "limits": level.previous_limits}
        after[POD_VIEW] = {"requests": level.requests, "limits": level.limits}
    return {"workload": str(c.workload), "before": before, "after": after}


def holds(pod: PodView, after: Values) -> bool:
    """The pod's spec already has the requests rightsizer asked for."""
    have = dict(pod.resources())
    if pod.pod_resources is not None:
        have[POD_VIEW] = pod.pod_resources
    for name, values in after.items():
        res = have.get(name)
        if res is None:
            return False
        for r, v in (values.get("requests") or {}).items():
            if getattr(res, f"{r}_request", None) != v:
                return False
    return True


def stuck_resize(pod: PodView, after: Values) -> tuple[str, str]:
    """The state of a resize rightsizer asked for (app.core.sizing.priority.resize_state) and the
    kubelet's message about it, from the pod's PodResizePending / PodResizeInProgress
    conditions."""
    pending = pod.condition("PodResizePending")
    progress = pod.condition("PodResizeInProgress")
    reason = pending.reason if pending is not None else None
    state = resize_state(reason, progress is not None, holds(pod, after))
    said = pending or progress
    return state, said.message if said is not None else ""


def describe(values: Values) -> str:
    """Each container's requests, as the Events and the audit trail say them: quantities a
    person reads (app.core.quantity.readable), app[cpu=203m, memory=363Mi]."""
    parts = []
    for name, v in values.items():
        req = ", ".join(f"{r}={readable(r, a)}" for r, a in sorted(v["requests"].items()))
        parts.append(f"{name}[{req}]")
    return " ".join(parts)


def describe_change(what: str, details: Mapping[str, Any]) -> str:
    """`what`, then the requests before and after (`describe`) where the audit `details` have
    them: the message of an Event and an audit row, "evict (...): app[cpu=1] -> app[cpu=200m]"."""
    if details.get("before") is None:
        return what
    return f"{what}: {describe(details['before'])} -> {describe(details['after'])}"
