"""Read-only recommendations: GET /api/v1/recommendations[/<namespace>/<kind>/<name>].

Where the recommender has seen the workload's pods it stores a pod's current requests (the most
common when pods differ), how many live pods run each container and the sum of their requests;
then each container also shows them (currentRequests, podRequests), the difference
(target - current), and the workload its savings over those real pods (estimatedSavings: the sum
over pods of request - target, app.core.savings) and their average per pod
(estimatedSavingsPerReplica), positive when the recommendation asks for less. Without current
requests (or pods) those fields are absent rather than guessed. Savings count only what rightsizer
would change (app.core.scope): a resource an HPA scales, a container whose policy is Off or that
does not control it, a namespace never sized count 0, each named with the reason in its
container's `excluded`; the workload's `savingsBasis` says whether its policy acts (`policy`) or
the numbers are what its policy (`policyOff`) or a default policy (`defaultPolicy`) would change.
Each workload also carries its `conditions` (app.core.conditions: VPA's RecommendationProvided,
LowConfidence, NoPodsMatched, ... and rightsizer's own), and a workload known only by its
conditions (a policy's target without pods) is listed with no containers. A DaemonSet sized per
node group also carries its groups (app.api.node_groups: `nodeGroupLabel`, and `nodeGroups` per
container).
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from app.api.auth import requires
from app.api.errors import ApiError
from app.api.fleet import per_cluster
from app.api.node_groups import with_node_groups
from app.api.query import reject_unknown_args
from app.core.history import history
from app.core.resources import Resources, format_cpu, format_memory
from app.core.savings import Savings
from app.core.workload_key import WorkloadKey
from app.settings import settings
from app.store.conditions import workload_conditions
from app.store.extensions import db
from app.store.models import Recommendation, WorkloadCondition
from app.store.node_groups import node_group_rows
from app.store.policies import InvalidPolicyLog
from app.store.recommendations import find_recommendations
from app.store.savings import Scoper, WorkloadScope, workload_savings
from app.store.session import to_unix

bp = Blueprint("recommendations", __name__)
FILTERS = ("namespace", "kind", "name")


def _time(d: Any) -> str | None:
    if d is None:
        return None
    return str(d.strftime("%Y-%m-%dT%H:%M:%SZ"))


GIB = 2**30


def current_and_difference(row: Recommendation) -> dict[str, Any]:
    """currentRequests and difference for the resources whose current request is known."""
    current: dict[str, str] = {}
    diff: dict[str, str] = {}
    if row.current_cpu_request is not None:
        current["cpu"] = format_cpu(row.current_cpu_request)
        diff["cpu"] = format_cpu(row.target_cpu - row.current_cpu_request)
    if row.current_memory_request is not None:
        current["memory"] = format_memory(row.current_memory_request)
        diff["memory"] = format_memory(row.target_memory - row.current_memory_request)
    return {"currentRequests": current, "difference": diff} if current else {}


def savings_per_replica(
    rows: list[Recommendation], scope: WorkloadScope
) -> dict[str, float] | None:
    """Cores and GiB a pod frees on average (negative: it needs more): the savings over the real
    pods divided by their number; without them, one pod's current requests minus the targets.
    Only over what rightsizer would change (`scope`). None if nothing is known."""
    seen = workload_savings(rows, scope)
    if seen is not None:
        return _cores_and_gib(seen.per_pod)
    cpu = [
        r.current_cpu_request - r.target_cpu if "cpu" not in scope.of(r.container) else 0
        for r in rows
        if r.current_cpu_request is not None
    ]
    mem = [
        r.current_memory_request - r.target_memory if "memory" not in scope.of(r.container) else 0
        for r in rows
        if r.current_memory_request is not None
    ]
    if not cpu and not mem:
        return None
    out: dict[str, float] = {}
    if cpu:
        out["cpuCores"] = round(sum(cpu) / 1000, 3)
    if mem:
        out["memoryGiB"] = round(sum(mem) / GIB, 3)
    return out


def savings_total(rows: list[Recommendation], scope: WorkloadScope) -> dict[str, float] | None:
    """Cores and GiB the live pods together would free: the sum over the pods of each container
    of request - target (app.core.savings), over what rightsizer would change (`scope`); None if
    no container's pods were seen."""
    seen = workload_savings(rows, scope)
    return _cores_and_gib(seen.all_pods) if seen is not None else None


def _cores_and_gib(s: Savings) -> dict[str, float]:
    return {"cpuCores": round(s.cores, 3), "memoryGiB": round(s.gib, 3)}


def pod_requests(row: Recommendation) -> dict[str, Any]:
    """podRequests: how many live pods run the container, and their requests together."""
    if row.replicas is None or row.requested_cpu_total is None:
        return {}
    return {
        "podRequests": {
            "pods": row.replicas,
            "cpu": format_cpu(row.requested_cpu_total),
            "memory": format_memory(row.requested_memory_total or 0),
        }
    }


def _container(row: Recommendation, excluded: dict[str, str], needed: float) -> dict[str, Any]:
    doc = {
        "name": row.container,
        "target": Resources(row.target_cpu, row.target_memory).as_quantities(),
        "lowerBound": Resources(row.lower_bound_cpu, row.lower_bound_memory).as_quantities(),
        "upperBound": Resources(row.upper_bound_cpu, row.upper_bound_memory).as_quantities(),
        "uncappedTarget": Resources(
            row.uncapped_target_cpu, row.uncapped_target_memory
        ).as_quantities(),
        "sampleCount": row.sample_count,
        "firstSampleTime": _time(row.first_sample_at),
        "lastSampleTime": _time(row.last_sample_at),
        "updateTime": _time(row.updated_at),
        # how much of the history the updater needs it has (app.core.history): the bounds mean
        # little before (VPA's widen as 1 / days of history; unbounded, `unknown`, at none)
        "history": history(
            to_unix(row.first_sample_at), to_unix(row.last_sample_at), needed
        ).document(),
    }
    doc.update(current_and_difference(row))
    doc.update(pod_requests(row))
    if row.conflicts:
        doc["conflicts"] = row.conflicts
    if row.reason:
        doc["reason"] = row.reason  # how the policy's strategy reached the target
    if excluded:
        doc["excluded"] = excluded  # resource -> why rightsizer leaves it alone (app.core.scope)
    return doc


def workloads(rows: list[Recommendation], scoper: Scoper) -> list[dict[str, Any]]:
    needed = settings().updater.min_history_seconds
    out = []
    for (ns, kind, name), group in groupby(rows, key=lambda r: (r.namespace, r.kind, r.name)):
        members = list(group)
        scope = scoper(members)
        doc: dict[str, Any] = {
            "namespace": ns,
            "kind": kind,
            "name": name,
            "containers": [_container(r, scope.of(r.container), needed) for r in members],
            "savingsBasis": scope.basis,
        }
        replicas = [r.replicas for r in members if r.replicas is not None]
        if replicas:
            doc["replicas"] = max(replicas)
        savings = savings_per_replica(members, scope)
        if savings is not None:
            doc["estimatedSavingsPerReplica"] = savings
        total = savings_total(members, scope)
        if total is not None:
            doc["estimatedSavings"] = total
        out.append(doc)
    return out


# A policy row edited by hand into nonsense governs nothing here either: logged once per version.
_INVALID_POLICIES = InvalidPolicyLog("api")


def scoper(namespace: str | None = None) -> Scoper:
    """Scoper.as_configured, with this module's log of invalid policies."""
    return Scoper.as_configured(db.session, _INVALID_POLICIES, settings(), namespace)


def condition_document(row: WorkloadCondition) -> dict[str, Any]:
    """One condition as VPA writes them in status.conditions."""
    return {
        "type": row.type,
        "status": row.status,
        "reason": row.reason,
        "message": row.message,
        "lastTransitionTime": _time(row.last_transition_time),
    }


def with_conditions(
    docs: list[dict[str, Any]], conditions: dict[WorkloadKey, list[WorkloadCondition]]
) -> list[dict[str, Any]]:
    """Each workload with its `conditions` (app.core.conditions); a workload known only by its
    conditions (a policy's target with no pods, or none at all) is listed without containers."""
    by_key = {WorkloadKey(d["namespace"], d["kind"], d["name"]): d for d in docs}
    for w in conditions:
        if w not in by_key:
            by_key[w] = {"namespace": w.namespace, "kind": w.kind, "name": w.name, "containers": []}
    for w, doc in by_key.items():
        doc["conditions"] = [condition_document(c) for c in conditions.get(w, [])]
    return [by_key[w] for w in sorted(by_key)]


@bp.get("/recommendations")
@requires("list", "recommendations", namespaced=True)
@per_cluster
def list_recommendations() -> ResponseReturnValue:
    reject_unknown_args((*FILTERS, "cluster"))
    filters = {k: request.args[k] for k in FILTERS if k in request.args}
    rows = find_recommendations(db.session, **filters)
    conditions = workload_conditions(db.session, **filters)
    scope = scoper(filters.get("namespace"))
    docs = with_node_groups(workloads(rows, scope), node_group_rows(db.session, **filters))
    return jsonify({"items": with_conditions(docs, conditions)})


@bp.get("/recommendations/<namespace>/<kind>/<name>")
@requires("get", "recommendations", namespaced=True)
@per_cluster
def get_recommendation(namespace: str, kind: str, name: str) -> ResponseReturnValue:
    reject_unknown_args(("cluster",))
    rows = find_recommendations(db.session, namespace, kind, name)
    conditions = workload_conditions(db.session, namespace, kind, name)
    if not rows and not conditions:
        raise ApiError(404, "NotFound", f"no recommendation for {kind} {namespace}/{name}")
    docs = with_node_groups(
        workloads(rows, scoper(namespace)), node_group_rows(db.session, namespace, kind, name)
    )
    return jsonify(with_conditions(docs, conditions)[0])
