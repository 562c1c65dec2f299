"""What lies behind a workload's recommendation: GET /api/v1/workloads/<ns>/<kind>/<name>/histogram
(the usage histograms) and .../history (the target over time, beside the requests of the time).

The histograms are app/store/histograms.py's read model (shared with the dashboard): the buckets
shown are the ones the recommender's percentiles come from.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from app.api.auth import requires
from app.api.common import rfc3339
from app.api.errors import ApiError
from app.api.fleet import per_cluster
from app.api.query import reject_unknown_args
from app.core.quantity import format_quantity
from app.core.resources import Resources, known_quantities
from app.settings import settings
from app.store.checkpoints import checkpoint_rows
from app.store.extensions import db
from app.store.histograms import ContainerHistograms, UsageHistogram, container_histograms
from app.store.history import recommendation_history
from app.store.models import RecommendationPoint

bp = Blueprint("workloads", __name__)


def _histogram(h: UsageHistogram) -> dict[str, Any]:
    return {
        "unit": h.unit,
        "totalWeight": h.total_weight,
        "referenceTime": rfc3339(h.reference_time),
        "buckets": [{"start": b.start, "end": b.end, "weight": b.weight} for b in h.buckets],
    }


def _container(h: ContainerHistograms) -> dict[str, Any]:
    return {
        "name": h.name,
        "sampleCount": h.sample_count,
        "cpu": _histogram(h.cpu),
        "memory": _histogram(h.memory),
    }


@bp.get("/workloads/<namespace>/<kind>/<name>/histogram")
@requires("get", "recommendations", namespaced=True)
@per_cluster
def histogram(namespace: str, kind: str, name: str) -> ResponseReturnValue:
    reject_unknown_args(("cluster",))
    rows = checkpoint_rows(db.session, namespace, kind, name)
    if not rows:
        raise ApiError(404, "NotFound", f"no usage history for {kind} {namespace}/{name}")
    containers = []
    for row in rows:
        try:
            h = container_histograms(row, settings().recommender.model)
            containers.append(_container(h))
        except (ValueError, TypeError) as e:
            containers.append({"name": row.container, "error": f"checkpoint unreadable: {e}"})
    return jsonify({"namespace": namespace, "kind": kind, "name": name, "containers": containers})


def usage_percentiles(p: RecommendationPoint) -> dict[str, dict[str, str]]:
    """{"cpu": {"p50": "120m", "p90": "180m"}, "memory": {...}} for what the point knows."""
    out: dict[str, dict[str, str]] = {}
    for resource, p50, p90 in (
        ("cpu", p.usage_cpu_p50, p.usage_cpu_p90),
        ("memory", p.usage_memory_p50, p.usage_memory_p90),
    ):
        if p50 is not None and p90 is not None:
            out[resource] = {
                "p50": format_quantity(resource, p50),
                "p90": format_quantity(resource, p90),
            }
    return out


@bp.get("/workloads/<namespace>/<kind>/<name>/history")
@requires("get", "recommendations", namespaced=True)
@per_cluster
def history(namespace: str, kind: str, name: str) -> ResponseReturnValue:
    """Per container, the recommender's points (at most one an hour, kept 8 days), oldest first:
    the target then, the container's requests then where the recommender had seen them, and
    the 50th and 90th percentile of its usage samples since the point before."""
    reject_unknown_args(("cluster",))
    points = recommendation_history(db.session, namespace, kind, name)
    if not points:
        raise ApiError(404, "NotFound", f"no recommendation history for {kind} {namespace}/{name}")
    containers: dict[str, list[dict[str, Any]]] = {}
    for p in points:
        point: dict[str, Any] = {
            "time": rfc3339(p.time),
            "target": Resources(p.target_cpu, p.target_memory).as_quantities(),
        }
        requests = known_quantities(p.current_cpu_request, p.current_memory_request)
        if requests:
            point["requests"] = requests
        usage = usage_percentiles(p)
        if usage:
            point["usage"] = usage
        containers.setdefault(p.container, []).append(point)
    return jsonify(
        {
            "namespace": namespace,
            "kind": kind,
            "name": name,
            "containers": [{"name": c, "points": pts} for c, pts in containers.items()],
        }
    )
