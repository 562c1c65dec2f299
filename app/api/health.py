"""Liveness and readiness for kubelet probes.

Readiness follows what the pod can still do for the cluster. Its critical job is answering
`/mutate`, which reads an in-process cache, never the database. So a database outage while that
cache is fresh leaves the pod ready but *degraded* (200, naming the dependency): taking every
replica out of the Service for it would turn "recommendations a little old" into "no webhook at
all" (with failurePolicy Ignore, pods created unchanged). Without a fresh cache to serve from,
the same outage makes the pod not ready (503). The webhook registers its cache through
app.web.probes at app creation; this module does not import it.
"""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify
from flask.typing import ResponseReturnValue

from app.api.errors import error_response
from app.store.extensions import db
from app.store.session import ping
from app.web.probes import cache_states

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> ResponseReturnValue:
    """Alive: the process answers. No database call, so a DB outage does not restart us."""
    return jsonify({"status": "ok"})


@bp.get("/readyz")
def readyz() -> ResponseReturnValue:
    try:
        ping(db.session)
    except Exception as e:  # any driver error means the database is not usable now
        db.session.rollback()
        problem = f"database not reachable: {type(e).__name__}"
        # No registered cache (an app without the webhook) is as good as an empty one.
        caches = cache_states(current_app) or {"webhook": "cache_empty"}
        unusable = [f"{name} {state}" for name, state in caches.items() if state != "fresh"]
        if unusable:
            return error_response(503, "ServiceUnavailable", f"{problem}; {', '.join(unusable)}")
        served = " and ".join(f"the {name}" for name in caches) + " answers"
        return jsonify(
            {
                "status": "degraded",
                "degraded": ["database"],
                "message": f"{problem}; {served} from its cache, writes fail",
            }
        )
    return jsonify({"status": "ready"})
