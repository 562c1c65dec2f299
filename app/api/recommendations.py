"""Read-only recommendations: GET /api/v1/recommendations[/<namespace>/<kind>/<name>].

Where the recommender has seen the workload's pods it stores their current requests and how many
live pods (replicas) it saw; then each container also shows them, the difference
(target - current) and the workload the savings per replica and over all its replicas, positive
when the recommendation asks for less. Without current requests (or replicas) those fields are
absent rather than guessed.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import groupby
from typing import Any

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from app.api.auth import requires
from app.api.errors import ApiError
from app.api.query import reject_unknown_args
from app.core.resources import Resources, format_cpu, format_memory
from app.extensions import db
from app.models import Recommendation
from app.store.recommendations import find_recommendations

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


def savings_per_replica(rows: list[Recommendation]) -> dict[str, float] | None:
    """Cores and GiB one replica would free (negative: it needs more); None if nothing known."""
    return _savings(rows, lambda r: 1)


def savings_total(rows: list[Recommendation]) -> dict[str, float] | None:
    """Cores and GiB all live replicas together would free; None if requests or replicas are
    unknown. Each container counts with the replicas seen in the run that read its requests."""
    return _savings([r for r in rows if r.replicas is not None], lambda r: r.replicas or 0)


def _savings(
    rows: list[Recommendation], times: Callable[[Recommendation], int]
) -> dict[str, float] | None:
    cpu = [
        (r.current_cpu_request - r.target_cpu) * times(r)
        for r in rows
        if r.current_cpu_request is not None
    ]
    mem = [
        (r.current_memory_request - r.target_memory) * times(r)
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


def _container(row: Recommendation) -> dict[str, Any]:
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
    }
    doc.update(current_and_difference(row))
    if row.conflicts:
        doc["conflicts"] = row.conflicts
    if row.reason:
        doc["reason"] = row.reason  # how the policy's strategy reached the target
    return doc


def workloads(rows: list[Recommendation]) -> list[dict[str, Any]]:
    out = []
    for (ns, kind, name), group in groupby(rows, key=lambda r: (r.namespace, r.kind, r.name)):
        members = list(group)
        doc: dict[str, Any] = {
            "namespace": ns,
            "kind": kind,
            "name": name,
            "containers": [_container(r) for r in members],
        }
        replicas = [r.replicas for r in members if r.replicas is not None]
        if replicas:
            doc["replicas"] = max(replicas)
        savings = savings_per_replica(members)
        if savings is not None:
            doc["estimatedSavingsPerReplica"] = savings
        total = savings_total(members)
        if total is not None:
            doc["estimatedSavings"] = total
        out.append(doc)
    return out


@bp.get("/recommendations")
@requires("list", "recommendations", namespaced=True)
def list_recommendations() -> ResponseReturnValue:
    reject_unknown_args(FILTERS)
    filters = {k: request.args[k] for k in FILTERS if k in request.args}
    rows = find_recommendations(db.session, **filters)
    return jsonify({"items": workloads(rows)})


@bp.get("/recommendations/<namespace>/<kind>/<name>")
@requires("get", "recommendations", namespaced=True)
def get_recommendation(namespace: str, kind: str, name: str) -> ResponseReturnValue:
    reject_unknown_args(())
    rows = find_recommendations(db.session, namespace, kind, name)
    if not rows:
        raise ApiError(404, "NotFound", f"no recommendation for {kind} {namespace}/{name}")
    return jsonify(workloads(rows)[0])
