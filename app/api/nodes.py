"""The cluster's spread of node levels over time: GET /api/v1/nodes/spread (docs/placement.md).

The points the leader records at most every 5 minutes for a week (app.store.node_spread), oldest
first: how far apart the nodes' CPU and memory levels are (max - min and standard deviation, in
fractions of allocatable) and the hottest node's CPU level. Readable by whoever may list
recommendations: both are derived from the cluster's usage.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, jsonify
from flask.typing import ResponseReturnValue

from app.api.auth import requires
from app.api.common import rfc3339
from app.api.query import reject_unknown_args, time_arg
from app.core.placement.spread import SpreadPoint
from app.store.extensions import db
from app.store.node_spread import load_spread

bp = Blueprint("nodes", __name__)


def point_document(at: float, p: SpreadPoint) -> dict[str, Any]:
    return {
        "time": rfc3339(datetime.fromtimestamp(at, UTC)),
        "nodes": p.nodes,
        "cpuSpread": p.cpu_spread,
        "cpuDeviation": p.cpu_deviation,
        "cpuHottest": p.cpu_hottest,
        "memorySpread": p.memory_spread,
        "memoryDeviation": p.memory_deviation,
    }


@bp.get("/nodes/spread")
@requires("list", "recommendations")
def node_spread() -> ResponseReturnValue:
    reject_unknown_args(("since",))
    since = time_arg("since")
    points = load_spread(db.session, since.timestamp() if since is not None else None)
    return jsonify({"items": [point_document(at, p) for at, p in points]})
