"""The updater job: replace or resize running pods far from their recommendation (VPA updater).

Per workload whose policy is Recreate or InPlaceOrRecreate: pods qualify by
app.core.sizing.priority, are taken scale-ups first, and at most int(replicas x tolerance) per
owner per run are disrupted;
owners with fewer live pods than minReplicas are left alone. New values come from the same patch
builder the webhook uses, so a resized pod gets exactly what a recreated one would.

Safety first: nothing happens while the webhook is not registered (an evicted pod would come
back unchanged), for recommendations with less than `min_history` of data, or when the new
requests fit on no node. New requests are capped by the namespace's LimitRanges exactly as the
webhook caps them: a pod that holds what the webhook would give it is never evicted to get more,
which would bring it back with the same values, run after run. Evictions go through the
Eviction API, so PodDisruptionBudgets apply; a refusal (429) is retried next run, never turned
into a delete.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flask import Flask

from app.core.policy import Policy
from app.core.recommend.model import WorkloadKey
from app.core.sizing.fit import BLOCKING_EFFECTS, NodeRoom, Placement, place
from app.core.sizing.limitrange import LimitRangeItem
from app.core.sizing.patch import PodInvalid, PodPatch, build_patch
from app.core.sizing.priority import (
    ContainerView,
    DisruptionBudget,
    PodPriority,
    ResizeWatch,
    TokenBucket,
    UpdaterSettings,
    changes_qos,
    is_quick_oom,
    pod_priority,
    resize_state,
    update_reason,
)
from app.core.sizing.resize_rules import ResizeCheck, known_refusal, memory_policy
from app.extensions import db
from app.jobs.samples import app_containers, container_resources, parse_time
from app.kube.actions import PodActions
from app.kube.cluster import ClusterView
from app.kube.limitranges import LimitRangeCache
from app.kube.quantity import quantity_amount
from app.store import audit
from app.store.policies import InvalidPolicyLog
from app.store.snapshot import history_seconds
from app.webhook.cache import Snapshot, load_snapshot
from app.webhook.handler import parse_amount

log = logging.getLogger(__name__)
ACTIVE_MODES = ("Recreate", "InPlaceOrRecreate")


@dataclass
class UpdaterOptions:
    interval: float = 60.0
    settings: UpdaterSettings = field(default_factory=UpdaterSettings)
    min_history_seconds: float = 3600.0
    evictions_per_second: float = 0.0  # 0: no global limit
    eviction_burst: int = 1
    dry_run: bool = False
    excluded_namespaces: frozenset[str] = frozenset()
    # A policy changed more recently than this is not acted on yet: the webhook processes may not
    # have loaded it, and a pod evicted meanwhile would come back without it (0: no wait).
    policy_settle_seconds: float = 0.0


@dataclass
class Candidate:
    pod: dict[str, Any]
    workload: WorkloadKey
    priority: PodPriority
    reason: str
    patch: PodPatch
    pending: bool


def is_running(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and not (
        pod.get("metadata") or {}
    ).get("deletionTimestamp")


def is_live(pod: dict[str, Any]) -> bool:
    """Scheduled, not terminal, not being deleted: the pods VPA's updater lists
    (spec.nodeName!=, status.phase!=Succeeded,Failed). Only these are counted or touched."""
    return (
        bool((pod.get("spec") or {}).get("nodeName"))
        and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        and not (pod.get("metadata") or {}).get("deletionTimestamp")
    )


def is_ready(pod: dict[str, Any]) -> bool:
    """Running with a true Ready condition: available, as PodDisruptionBudgets count it."""
    return is_running(pod) and condition(pod, "Ready") is not None


def node_rooms(nodes: Iterable[dict[str, Any]], pods: Iterable[dict[str, Any]]) -> list[NodeRoom]:
    used: dict[str, list[int]] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if not node or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        u = used.setdefault(node, [0, 0])
        for r in container_resources(pod).values():
            u[0] += r.cpu_request or 0
            u[1] += r.memory_request or 0
    rooms = []
    for n in nodes:
        spec, status = n.get("spec") or {}, n.get("status") or {}
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )
        if spec.get("unschedulable") or not ready:
            continue
        alloc = status.get("allocatable") or {}
        try:
            cpu, mem = (
                quantity_amount("cpu", alloc.get("cpu", "0")),
                quantity_amount("memory", alloc.get("memory", "0")),
            )
        except ValueError:
            continue
        meta = n.get("metadata") or {}
        name = meta.get("name", "")
        u = used.get(name, [0, 0])
        taints = tuple(
            (str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", "")))
            for t in spec.get("taints") or []
            if isinstance(t, dict) and t.get("effect") in BLOCKING_EFFECTS
        )
        labels = tuple(sorted((str(k), str(v)) for k, v in (meta.get("labels") or {}).items()))
        rooms.append(NodeRoom(name, cpu - u[0], mem - u[1], taints, labels))
    return rooms


def condition(pod: dict[str, Any], type_: str) -> dict[str, Any] | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_ and c.get("status") == "True":
            return dict(c)
    return None


class UpdaterJob:
    name = "updater"

    def __init__(
        self,
        app: Flask,
        cluster: ClusterView,
        actions: PodActions,
        options: UpdaterOptions,
        webhook_registered: Callable[[], bool],
        clock: Callable[[], float] = time.time,
        limit_ranges: LimitRangeCache | None = None,
    ) -> None:
        self.app, self.cluster, self.actions, self.options = app, cluster, actions, options
        self.limit_ranges = limit_ranges  # None: size without LimitRanges (tests, no cluster)
        self.interval = options.interval
        self.webhook_registered, self.clock = webhook_registered, clock
        if options.dry_run:
            # Dry run is a promise: whatever actions were passed, nothing is changed in the cluster.
            actions.dry_run = True
        self.bucket = TokenBucket(options.evictions_per_second, options.eviction_burst, clock)
        self.resizing = ResizeWatch()
        self.tally = Tally()
        self.invalid_policies = InvalidPolicyLog("updater")  # each bad row logged once

    def run_once(self, still_leader: Callable[[], bool]) -> str:
        if not self.cluster.wait_synced(timeout=min(self.interval, 30.0)):
            return "caches not synced yet; nothing done"
        stale = self.cluster.wait_live(timeout=min(self.interval, 5.0))
        if stale:
            # Budgets are counted from the caches: with a watch down, pods that died unseen
            # would count as running, and evicting "the tolerance" could leave none.
            return f"caches not following the API server ({', '.join(stale)}): no pod touched"
        if self.limit_ranges is not None and (
            not self.limit_ranges.wait_synced(min(self.interval, 5.0)) or self.limit_ranges.failing
        ):
            # Sized without them, a pod capped by a LimitRange would be evicted to get more and
            # come back from the webhook with the same values.
            return "LimitRanges not known (cannot list them): no pod touched"
        if not self.webhook_registered():
            return (
                "webhook not registered or not serving: no pod touched "
                "(it would come back unchanged)"
            )
        with self.app.app_context():
            snapshot = load_snapshot(db.session(), invalid=self.invalid_policies)
            history = history_seconds(db.session)
        pods = self.cluster.pods.items()
        by_workload: dict[WorkloadKey, list[dict[str, Any]]] = {}
        for pod in pods:
            if not is_live(pod):
                continue  # terminal or unscheduled: neither counted nor a candidate
            w = self.cluster.workload_of(pod)
            if w is not None and w.namespace not in self.options.excluded_namespaces:
                by_workload.setdefault(w, []).append(pod)
        rooms = node_rooms(self.cluster.nodes.items(), pods)
        s = self.options.settings
        budgets = {
            w: DisruptionBudget(
                self._configured(w, wpods), sum(map(is_ready, wpods)), s.eviction_tolerance
            )
            for w, wpods in by_workload.items()
        }
        self.tally = Tally()
        self._resize_fallbacks(by_workload, budgets, still_leader)
        considered = settling = 0
        now = self.clock()
        for w, wpods in sorted(by_workload.items()):
            policy = snapshot.policy_for(w)
            if policy is None or policy.update_mode not in ACTIVE_MODES:
                continue
            considered += 1
            age = now - policy.changed
            if self.options.policy_settle_seconds > 0 and age < self.options.policy_settle_seconds:
                settling += 1
                log.info(
                    "not updating %s yet: its policy %s/%s changed %.0fs ago, and the webhook "
                    "reloads policies every %.0fs (a pod evicted now could come back without it)",
                    w,
                    policy.namespace,
                    policy.name,
                    max(age, 0.0),
                    self.options.policy_settle_seconds / 2,
                )
                continue
            self._workload(w, wpods, policy, snapshot, history, rooms, budgets[w], still_leader)
        t = self.tally
        waiting = f", {settling} waiting for the webhook to load their policy" if settling else ""
        return (
            f"{considered} workloads in an active mode: {t.updated} pods updated, "
            f"{t.fallbacks} resize fallbacks, {t.held} held back{waiting}"
        )

    def _ranges(self, namespace: str) -> Sequence[LimitRangeItem]:
        return self.limit_ranges(namespace) if self.limit_ranges is not None else ()

    def _views(
        self,
        pod: dict[str, Any],
        w: WorkloadKey,
        policy: Policy,
        snapshot: Snapshot,
        patch: PodPatch,
    ) -> list[ContainerView]:
        """The controlled containers, each against what the patch would set: the target after the
        policy's and the LimitRanges' caps. The bounds widen to take that value in, so a pod that
        holds the best it is allowed is never "outside the recommended range"."""
        from app.core.recommend.capping import policy_for_container

        recs = snapshot.recommendations.get(w, {})
        excluded = snapshot.excluded.get(w, {})
        resources = container_resources(pod)
        sized = {u.name: u.requests for u in patch.updates}
        views = []
        for c in app_containers(pod):
            name = c.get("name", "")
            rec, cp = recs.get(name), policy_for_container(list(policy.container_policies), name)
            if rec is None or cp.mode == "Off":
                continue
            controlled = [r for r in cp.controlled_resources if r not in excluded.get(name, ())]
            cur = resources.get(name)
            requests = {}
            if cur is not None:
                requests = {
                    k: v
                    for k, v in (("cpu", cur.cpu_request), ("memory", cur.memory_request))
                    if v is not None
                }

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
        return views

    def _quick_oom(self, pod: dict[str, Any]) -> bool:
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            term = (cs.get("lastState") or {}).get("terminated") or {}
            if is_quick_oom(
                parse_time(term.get("startedAt")),
                parse_time(term.get("finishedAt")),
                term.get("reason"),
                self.options.settings,
            ):
                return True
        return False

    def _workload(
        self,
        w: WorkloadKey,
        pods: list[dict[str, Any]],
        policy: Policy,
        snapshot: Snapshot,
        history: dict[tuple[WorkloadKey, str], float],
        rooms: list[NodeRoom],
        budget: DisruptionBudget,
        still_leader: Callable[[], bool],
    ) -> None:
        s = self.options.settings
        live = [p for p in pods if is_running(p)]
        min_replicas = policy.min_replicas or s.default_min_replicas
        if len(live) < min_replicas:
            return
        containers = snapshot.recommendations.get(w, {})
        if not containers:
            return
        shortest = min(history.get((w, c), 0.0) for c in containers)
        if shortest < self.options.min_history_seconds:
            log.info(
                "not updating %s: its recommendation has %.0fs of history, %.0fs needed",
                w,
                shortest,
                self.options.min_history_seconds,
            )
            return
        now = self.clock()
        candidates = []
        for pod in pods:
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                continue
            try:
                patch = build_patch(
                    pod,
                    containers,
                    policy,
                    self._ranges(w.namespace),
                    parse=parse_amount,
                    excluded=snapshot.excluded.get(w),
                )
            except PodInvalid:
                continue
            if not any(u.requests != u.previous_requests for u in patch.updates):
                continue  # it already holds what the webhook would give it
            views = self._views(pod, w, policy, snapshot, patch)
            if not views:
                continue
            prio = pod_priority(views)
            reason = update_reason(
                prio,
                parse_time((pod.get("status") or {}).get("startTime")),
                now,
                self._quick_oom(pod),
                s,
            )
            if reason is not None:
                candidates.append(Candidate(pod, w, prio, reason, patch, not is_running(pod)))
        candidates.sort(key=lambda c: c.priority.sort_key())
        t = self.tally
        for c in candidates:
            if not budget.can_disrupt(c.pending, is_ready(c.pod)):
                t.held += 1
                continue
            placed = self._place(c, rooms)
            if placed is None:
                t.held += 1
                log.info("not updating %s: its new requests fit on no node", _ref(c.pod))
                continue
            if not self.bucket.take():
                t.held += 1
                log.info("not updating %s now: global eviction rate limit", _ref(c.pod))
                continue
            if not still_leader() or self.cluster.stale():
                break
            now_pod = self._unchanged(c)
            if now_pod is None:
                t.held += 1
                continue
            done = self._apply(c, policy, now_pod)
            if done is None:
                t.held += 1
                continue
            budget.record(c.pending, is_ready(c.pod))
            rooms[:] = placed  # later pods of this run see the room this one took
            t.updated += 1
            if done == "fallback":
                t.fallbacks += 1

    def _unchanged(self, c: Candidate) -> dict[str, Any] | None:
        """The pod as the API server has it now, if it is still the one the cache showed: same
        uid, not being deleted, and Running if it was; else None. Under churn the cache lags:
        never act on a pod that is gone, nor on another pod that took its name (a
        StatefulSet's), nor count a pod that stopped as disruptable."""
        meta = c.pod.get("metadata") or {}
        now = self.actions.current(meta.get("namespace", ""), meta.get("name", ""))
        if now is None or (now.get("metadata") or {}).get("uid") != meta.get("uid"):
            log.info("not updating %s: it no longer exists", _ref(c.pod))
            return None
        if not is_live(now) or (not c.pending and not is_running(now)):
            log.info("not updating %s: it is no longer running", _ref(c.pod))
            return None
        return now

    def _configured(self, w: WorkloadKey, pods: list[dict[str, Any]]) -> int:
        owner = self.cluster.lookup(w.namespace, w.kind, w.name)
        replicas = ((owner or {}).get("spec") or {}).get("replicas")
        return int(replicas) if isinstance(replicas, int) else len(pods)

    def _place(self, c: Candidate, rooms: list[NodeRoom]) -> list[NodeRoom] | None:
        new_cpu = new_mem = cur_cpu = cur_mem = 0
        changed = {u.name: u for u in c.patch.updates}
        for name, res in container_resources(c.pod).items():
            u = changed.get(name)
            cur_cpu += res.cpu_request or 0
            cur_mem += res.memory_request or 0
            new_cpu += (
                u.requests.get("cpu") if u and "cpu" in u.requests else res.cpu_request
            ) or 0
            new_mem += (
                u.requests.get("memory") if u and "memory" in u.requests else res.memory_request
            ) or 0
        spec = c.pod.get("spec") or {}
        return place(
            rooms, spec.get("nodeName"), (cur_cpu, cur_mem), (new_cpu, new_mem), Placement.of(spec)
        )

    def _apply(self, c: Candidate, policy: Policy, live: dict[str, Any]) -> str | None:
        """Resize or evict; "resize", "evict" or "fallback" (evicted instead of resized) when
        done, None when nothing happened (tried again next run). `live`: the pod as the API
        server has it now (the cache keeps neither resizePolicy nor pod-level resources)."""
        meta = c.pod.get("metadata") or {}
        ns, name = meta.get("namespace", ""), meta.get("name", "")
        before = {
            u.name: {"requests": u.previous_requests, "limits": u.previous_limits}
            for u in c.patch.updates
        }
        after = {u.name: {"requests": u.requests, "limits": u.limits} for u in c.patch.updates}
        details = {"workload": str(c.workload), "before": before, "after": after}
        if policy.update_mode == "InPlaceOrRecreate" and not c.pending:
            why = self._not_resizable(c, live)
            if why is not None:
                return self._fallback(c.pod, why, details)
            containers, init_containers = self._resize_body(c)
            outcome = self.actions.resize(ns, name, containers, init_containers)
            if outcome == "done":
                if not self.options.dry_run:
                    self.resizing.requested(meta.get("uid", name), self.clock(), details)
                return self._done("resize", "RightsizerResized", c, details)
            if outcome == "refused":
                why = f"resize refused by the API server ({self.actions.last_refusal})"
                return self._fallback(c.pod, why, details)
            if outcome == "unsupported":
                why = "resize not supported by this cluster (< 1.33)"
                return self._fallback(c.pod, why, details)
            log.info("resize %s/%s not done (%s)", ns, name, outcome)
            return None
        outcome = self.actions.evict(ns, name, meta.get("uid"))
        if outcome != "done":
            log.info("evict %s/%s not done (%s)", ns, name, outcome)
            return None
        return self._done("evict", "RightsizerEvicted", c, details)

    def _not_resizable(self, c: Candidate, live: dict[str, Any]) -> str | None:
        """Why Kubernetes would refuse this resize, known before sending it: a QoS class change
        (every release), or what the cluster's release refuses
        (app.core.sizing.resize_rules)."""
        qos = self._changes_qos(c, live)
        if qos is not None:
            return f"resize would change the QoS class {qos[0]} -> {qos[1]}"
        specs = {x.get("name"): x for x in app_containers(live)}
        checks = []
        for u in c.patch.updates:
            spec = specs.get(u.name) or {}
            checks.append(
                ResizeCheck(
                    u.name,
                    u.previous_limits.get("memory"),
                    u.limits.get("memory", u.previous_limits.get("memory")),
                    memory_policy(spec),
                )
            )
        return known_refusal(self.actions.server_minor(), checks)

    def _done(self, action: str, reason: str, c: Candidate, details: dict[str, Any]) -> str:
        message = f"{action} ({c.reason}): {_describe(details['before'])} -> "
        message += _describe(details["after"])
        self._record(action, c.pod, reason, message, details)
        return action

    def _fallback(self, pod: dict[str, Any], why: str, details: dict[str, Any]) -> str | None:
        """Evict instead of resizing; the event and the audit row say why, with the values."""
        meta = pod.get("metadata") or {}
        ns, name = meta.get("namespace", ""), meta.get("name", "")
        outcome = self.actions.evict(ns, name, meta.get("uid"))
        if outcome != "done":
            log.info("fallback eviction of %s/%s (%s) not done (%s)", ns, name, why, outcome)
            return None
        message = f"{why}: evicting instead"
        if details.get("before") is not None:
            message += f": {_describe(details['before'])} -> {_describe(details['after'])}"
        self._record(
            "evict",
            pod,
            "RightsizerResizeFallback",
            message,
            {**details, "fallback": why},
            "Warning",
        )
        return "fallback"

    def _record(
        self,
        action: str,
        pod: dict[str, Any],
        reason: str,
        message: str,
        details: dict[str, Any],
        type_: str = "Normal",
    ) -> None:
        log.info(
            "%s%s %s: %s", "[dry run] " if self.options.dry_run else "", action, _ref(pod), message
        )
        # Audit first: it is the record that the pod was touched, an Event is only a courtesy.
        self._audit(action, _ref(pod), message, details)
        self.actions.record_event(pod, reason, message, type_)

    def _changes_qos(self, c: Candidate, live: dict[str, Any]) -> tuple[str, str] | None:
        def amounts(res: Any) -> dict[str, dict[str, int]]:
            return {
                "requests": {
                    k: v
                    for k, v in (("cpu", res.cpu_request), ("memory", res.memory_request))
                    if v is not None
                },
                "limits": {
                    k: v
                    for k, v in (("cpu", res.cpu_limit), ("memory", res.memory_limit))
                    if v is not None
                },
            }

        current = {name: amounts(res) for name, res in container_resources(live).items()}
        spec = live.get("spec") or {}
        # Init containers that are not sidecars cannot be resized but count for the class.
        plain_init = [
            x for x in spec.get("initContainers") or [] if x.get("restartPolicy") != "Always"
        ]
        others = [
            amounts(r) for r in container_resources({"spec": {"containers": plain_init}}).values()
        ]
        pod_level = amounts(_resources_of(spec.get("resources"))) if spec.get("resources") else None
        updates = {u.name: {"requests": u.requests, "limits": u.limits} for u in c.patch.updates}
        return changes_qos(current, updates, others, pod_level)

    def _resize_body(self, c: Candidate) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The resize body's containers and initContainers: a native sidecar lives under
        spec.initContainers (its ContainerUpdate.path says so), and there it must be addressed."""
        fmt = lambda res, v: f"{v}m" if res == "cpu" else str(v)  # noqa: E731
        containers, init_containers = [], []
        for u in c.patch.updates:
            resources: dict[str, Any] = {"requests": {r: fmt(r, v) for r, v in u.requests.items()}}
            if u.limits:
                resources["limits"] = {r: fmt(r, v) for r, v in u.limits.items()}
            entry = {"name": u.name, "resources": resources}
            if u.path.startswith("/spec/initContainers/"):
                init_containers.append(entry)
            else:
                containers.append(entry)
        return containers, init_containers

    def _resize_fallbacks(
        self,
        by_workload: dict[WorkloadKey, list[dict[str, Any]]],
        budgets: dict[WorkloadKey, DisruptionBudget],
        still_leader: Callable[[], bool],
    ) -> None:
        """Evicts pods whose resize is Infeasible, Deferred too long or InProgress too long,
        within their workload's disruption budget (a pod held back is tried next run)."""
        now, t = self.clock(), self.tally
        live_uids = set()
        for w, pods in by_workload.items():
            for pod in pods:
                uid = (pod.get("metadata") or {}).get("uid", "")
                live_uids.add(uid)
                if uid not in self.resizing:
                    continue
                pending = condition(pod, "PodResizePending")
                progress = condition(pod, "PodResizeInProgress")
                details = self.resizing.details.get(uid, {})
                state = resize_state(
                    (pending or {}).get("reason"),
                    progress is not None,
                    _holds(pod, details.get("after") or {}),
                )
                why = self.resizing.observe(uid, state, now)
                if why is None:
                    continue
                if not still_leader():
                    return
                ready = is_ready(pod)
                if not budgets[w].can_disrupt(False, ready):
                    t.held += 1
                    log.info("fallback for %s waits: disruption budget of %s", _ref(pod), w)
                    continue
                if not self.bucket.take():
                    t.held += 1
                    log.info("fallback for %s waits: global eviction rate limit", _ref(pod))
                    continue
                text = (pending or progress or {}).get("message", "")
                reason = f"resize {why}" + (f" ({text})" if text else "")
                if self._fallback(pod, reason, details):
                    self.resizing.forget(uid)
                    budgets[w].record(False, ready)
                    t.fallbacks += 1
                else:
                    t.held += 1
        self.resizing.keep_only(live_uids)

    def _audit(self, action: str, ref: str, message: str, details: dict[str, Any]) -> None:
        if self.options.dry_run:
            return
        with self.app.app_context():
            audit.record(db.session, "rightsizer/updater", action, "Pod", ref, message, details)
            db.session.commit()


@dataclass
class Tally:
    """What one run did, for its summary line."""

    updated: int = 0  # pods resized or evicted (fallback evictions included)
    fallbacks: int = 0  # evicted instead of resized: refused, not resizable, or stuck
    held: int = 0  # qualified but left for a later run (budget, room, rate, refusals)


def _resources_of(res: Any) -> Any:
    """A pod's spec.resources as ContainerResources (for the QoS rule)."""
    return container_resources({"spec": {"containers": [{"name": "", "resources": res}]}})[""]


def _ref(pod: dict[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def _holds(pod: dict[str, Any], after: dict[str, dict[str, dict[str, int]]]) -> bool:
    """The pod's spec already has the requests rightsizer asked for."""
    have = container_resources(pod)
    for name, values in after.items():
        res = have.get(name)
        if res is None:
            return False
        for r, v in (values.get("requests") or {}).items():
            if getattr(res, f"{r}_request", None) != v:
                return False
    return True


def _describe(values: dict[str, dict[str, dict[str, int]]]) -> str:
    parts = []
    for name, v in values.items():
        req = ", ".join(
            f"{r}={a}{'m' if r == 'cpu' else ''}" for r, a in sorted(v["requests"].items())
        )
        parts.append(f"{name}[{req}]")
    return " ".join(parts)
