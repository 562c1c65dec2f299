"""The fleet: GET /api/v1/fleet, and the `cluster` parameter of the per-cluster reads.

A database may hold a fleet of clusters (app.store.clusters). Every per-cluster read of the API
(recommendations, workloads' histograms and history, policies, scalers, events) answers for the
serving process's own cluster unless `?cluster=NAME_OR_ID` names another of the database (by its
id, else its name): 400 naming the parameter when none matches. A list is of one cluster: its
items are keyed within a cluster, and two clusters may hold the same workload. The whole fleet is
GET /api/v1/fleet: per cluster its counts, savings and risk (app.store.fleet) as of `asOf` (as its
leader summed them after its last recommender run, `computedBy: leader`, else summed at this
request, `computedBy: request`), and their totals as of the oldest cluster's `asOf`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from app.api.auth import requires
from app.api.common import rfc3339
from app.api.errors import ApiError
from app.api.query import reject_unknown_args
from app.core.savings import Savings
from app.settings import settings
from app.store import clusters
from app.store.extensions import db
from app.store.figures import Figures
from app.store.fleet import ClusterSummary, fleet
from app.store.policies import InvalidPolicyLog
from app.store.savings import Scoper

bp = Blueprint("fleet", __name__)
F = TypeVar("F", bound=Callable[..., Any])
PARAM = "cluster"

_INVALID_POLICIES = InvalidPolicyLog("api")


def per_cluster(view: F) -> F:
    """The view's reads look at the cluster `?cluster=` names (400 naming the parameter when no
    cluster of the database answers to it); without it, at the process's own."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with clusters.viewing(_selected()):
            return view(*args, **kwargs)

    return wrapped  # type: ignore[return-value]


def _selected() -> int | None:
    ref = request.args.get(PARAM)
    if ref is None:
        return None
    if ref in ("", "*", "all"):
        raise ApiError(
            400,
            "BadRequest",
            f"{PARAM}: {ref!r} names no cluster; a list is of one cluster: "
            "GET /api/v1/fleet gives the whole fleet",
        )
    try:
        found = clusters.find_cluster(db.session, ref)
    except clusters.ClusterUnknown as e:
        raise ApiError(400, "BadRequest", f"{PARAM}: {e}") from None
    return found.id


def _amounts(s: Savings) -> dict[str, float]:
    return {"cpuCores": round(s.cores, 3), "memoryGiB": round(s.gib, 3)}


def figures_document(f: Figures) -> dict[str, Any]:
    return {
        "workloads": f.workloads,
        "containers": f.containers,
        "workloadsWithPods": f.seen_workloads,
        "pods": f.pods,
        "requested": _amounts(f.requested),
        "recommended": _amounts(f.recommended),
        "estimatedSavings": _amounts(f.savings),
        "shortfall": {**_amounts(f.shortfall), "containers": f.short_containers},
    }


def cluster_document(c: ClusterSummary) -> dict[str, Any]:
    return {
        "name": c.name,
        "id": c.uid,
        "self": c.own,
        **figures_document(c.figures),
        "lastRecommendationUpdate": rfc3339(c.last_update),
        "asOf": rfc3339(c.as_of),
        "computedBy": c.computed,
    }


@bp.get("/fleet")
@requires("list", "recommendations")
def get_fleet() -> ResponseReturnValue:
    reject_unknown_args(())
    found = fleet(
        db.session, lambda: Scoper.as_configured(db.session, _INVALID_POLICIES, settings())
    )
    return jsonify(
        {
            "items": [cluster_document(c) for c in found.clusters],
            "totals": {
                "clusters": len(found.clusters),
                **figures_document(found.totals),
                "lastRecommendationUpdate": rfc3339(found.last_update),
                "asOf": rfc3339(found.as_of),
            },
        }
    )
