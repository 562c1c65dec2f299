"""The audit trail: GET /api/v1/events, newest first, filtered and paginated.

Pagination is by key (the event id) rather than by offset, so events written while a client pages
through never shift or repeat a page; `continue` is opaque to clients, as in Kubernetes lists.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, request
from flask.typing import ResponseReturnValue

from app.api.auth import requires
from app.api.common import rfc3339
from app.api.errors import ApiError
from app.api.fleet import per_cluster
from app.api.query import int_arg, reject_unknown_args, time_arg
from app.store import events
from app.store.audit import ACTIONS
from app.store.events import EventFilter
from app.store.extensions import db
from app.store.models import AuditEvent

bp = Blueprint("events", __name__)

EXACT_FILTERS = ("action", "objectKind", "objectRef", "actor")  # matched exactly
PARAMS = (*EXACT_FILTERS, "since", "until", "limit", "continue", "cluster")
DEFAULT_LIMIT, MAX_LIMIT = 100, 1000


def event_document(e: AuditEvent) -> dict[str, Any]:
    return {
        "id": e.id,
        "time": rfc3339(e.time),
        "actor": e.actor,
        "action": e.action,
        "objectKind": e.object_kind,
        "objectRef": e.object_ref,
        "message": e.message,
        "details": e.details or {},
    }


def continue_from(token: str) -> int:
    try:
        return events.decode_continue(token)
    except ValueError as e:
        raise ApiError(400, "BadRequest", str(e)) from None


def filtered() -> EventFilter:
    """The request's filters; `continue` picks up after the previous page's last event."""
    args = request.args
    since, until = time_arg("since"), time_arg("until")
    action = args.get("action")
    if action is not None and action not in ACTIONS:
        raise ApiError(
            400,
            "BadRequest",
            f"action: unknown action {action!r}; actions are {', '.join(ACTIONS)}",
        )
    return EventFilter(
        action=action,
        object_kind=args.get("objectKind"),
        object_ref=args.get("objectRef"),
        actor=args.get("actor"),
        since=since,
        until=until,
        before_id=continue_from(args["continue"]) if "continue" in args else None,
    )


@bp.get("/events")
@requires("list", "events")
@per_cluster
def list_events() -> ResponseReturnValue:
    reject_unknown_args(PARAMS)
    limit = int_arg("limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    rows, more = events.page(db.session, filtered(), limit)
    return jsonify(
        {
            "items": [event_document(e) for e in rows],
            "continue": events.encode_continue(rows[-1].id) if more else None,
        }
    )
