"""What lies behind a workload's recommendation: GET /api/v1/workloads/<ns>/<kind>/<name>/histogram
(the usage histograms) and .../history (the target over time, beside the requests of the time).

Read from the checkpoint rows through the same loader the recommender restarts from, so the
buckets shown are the ones its percentiles come from. Weights are decayed weights relative to each
histogram's reference time: only their proportions matter.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify
from flask.typing import ResponseReturnValue

from app.api.auth import requires
from app.api.common import rfc3339
from app.api.errors import ApiError
from app.api.query import reject_unknown_args
from app.core.recommend.checkpoint import load_aggregate
from app.core.recommend.histogram import Histogram
from app.core.resources import Resources, format_cpu, format_memory
from app.extensions import db
from app.models import Checkpoint
from app.store.checkpoints import checkpoint_from_row, checkpoint_rows
from app.store.history import recommendation_history
from app.store.session import to_datetime

bp = Blueprint("workloads", __name__)


def buckets(h: Histogram) -> list[dict[str, float]]:
    """The non-empty buckets, [start, end) in the histogram's unit, with their weights."""
    out: list[dict[str, float]] = []
    if h.is_empty():
        return out
    last = h.buckets.num_buckets - 1
    for b in range(h.min_bucket, h.max_bucket + 1):
        w = h.weights[b]
        if w < h.buckets.epsilon:
            continue
        start = h.buckets.bucket_start(b)
        end = h.buckets.bucket_start(b + 1) if b < last else h.buckets.max_value
        out.append({"start": start, "end": end, "weight": w})
    return out


def _histogram(h: Any, unit: str) -> dict[str, Any]:
    return {
        "unit": unit,
        "totalWeight": h.total_weight,
        "referenceTime": rfc3339(to_datetime(h.reference_time)),
        "buckets": buckets(h),
    }


def container_histograms(row: Checkpoint) -> dict[str, Any]:
    """Raises ValueError for a checkpoint the recommender could not load either."""
    agg = load_aggregate(checkpoint_from_row(row), current_app.config["RECOMMENDER_SETTINGS"])
    return {
        "name": row.container,
        "sampleCount": row.sample_count,
        "cpu": _histogram(agg.cpu, "cores"),
        "memory": _histogram(agg.memory, "bytes"),
    }


@bp.get("/workloads/<namespace>/<kind>/<name>/histogram")
@requires("get", "recommendations", namespaced=True)
def histogram(namespace: str, kind: str, name: str) -> ResponseReturnValue:
    reject_unknown_args(())
    rows = checkpoint_rows(db.session, namespace, kind, name)
    if not rows:
        raise ApiError(404, "NotFound", f"no usage history for {kind} {namespace}/{name}")
    containers = []
    for row in rows:
        try:
            containers.append(container_histograms(row))
        except (ValueError, TypeError) as e:
            containers.append({"name": row.container, "error": f"checkpoint unreadable: {e}"})
    return jsonify({"namespace": namespace, "kind": kind, "name": name, "containers": containers})


@bp.get("/workloads/<namespace>/<kind>/<name>/history")
@requires("get", "recommendations", namespaced=True)
def history(namespace: str, kind: str, name: str) -> ResponseReturnValue:
    """Per container, the recommender's points (at most one an hour, kept 8 days), oldest first:
    the target then, and the container's requests then where the recommender had seen them."""
    reject_unknown_args(())
    points = recommendation_history(db.session, namespace, kind, name)
    if not points:
        raise ApiError(404, "NotFound", f"no recommendation history for {kind} {namespace}/{name}")
    containers: dict[str, list[dict[str, Any]]] = {}
    for p in points:
        point: dict[str, Any] = {
            "time": rfc3339(p.time),
            "target": Resources(p.target_cpu, p.target_memory).as_quantities(),
        }
        requests = {}
        if p.current_cpu_request is not None:
            requests["cpu"] = format_cpu(p.current_cpu_request)
        if p.current_memory_request is not None:
            requests["memory"] = format_memory(p.current_memory_request)
        if requests:
            point["requests"] = requests
        containers.setdefault(p.container, []).append(point)
    return jsonify(
        {
            "namespace": namespace,
            "kind": kind,
            "name": name,
            "containers": [{"name": c, "points": pts} for c, pts in containers.items()],
        }
    )
