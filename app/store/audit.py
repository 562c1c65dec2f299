"""Audit events: what rightsizer and its users changed, each added to the change it records.

`record` adds the event to the session of that change, so both commit or neither does. Every
eviction, resize and scale change is also counted in Prometheus here, at that one place, when the
event's transaction commits (a rolled-back event is not counted).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from prometheus_client import Counter
from sqlalchemy import event, select
from sqlalchemy.orm import Session

from app.store.clusters import cluster_key
from app.store.models import AuditEvent, utcnow
from app.store.session import DbSession

# Every action an audit event records: the API's writes, the webhook's per-workload mutation
# counts, the updater's evictions and in-place resizes (and those whose answer was lost), the
# proportional scaler's replica changes. GET /api/v1/events refuses a filter on any other, naming
# these (a misspelt `evicted` would otherwise match nothing, silently).
ACTIONS = (
    "create",
    "update",
    "delete",
    "mutate",
    "evict",
    "evict-unanswered",
    "resize",
    "resize-unanswered",
    "scale",
)

# Audit-event action -> the counter of what rightsizer did to the cluster.
ACTION_COUNTERS = {
    "evict": Counter(
        "rightsizer_evictions",
        "Pods rightsizer evicted (to apply a recommendation, or a resize "
        "that could not be done in place), counted when the audit event commits.",
    ),
    "resize": Counter(
        "rightsizer_resizes",
        "Pods rightsizer resized in place, counted when the audit event commits.",
    ),
    "scale": Counter(
        "rightsizer_scale_changes",
        "Replica changes the proportional scalers made, counted when the audit event commits.",
    ),
}
# An eviction or resize whose request went out and whose answer was lost: it may have been done.
_UNANSWERED = Counter(
    "rightsizer_unanswered_updates",
    "Evictions and resizes rightsizer sent whose answer was lost (they may have been done), "
    "counted when the audit event commits.",
)
ACTION_COUNTERS |= {"evict-unanswered": _UNANSWERED, "resize-unanswered": _UNANSWERED}
_PENDING_ACTIONS = "rightsizer.pending_actions"


@event.listens_for(Session, "after_flush")
def _note_actions(session: Session, _flush_context: Any) -> None:
    """Audit events of actions written by this flush: counted only if their transaction commits."""
    for obj in session.new:
        if isinstance(obj, AuditEvent) and obj.action in ACTION_COUNTERS:
            session.info.setdefault(_PENDING_ACTIONS, []).append(obj.action)


@event.listens_for(Session, "after_commit")
def _count_actions(session: Session) -> None:
    for action in session.info.pop(_PENDING_ACTIONS, ()):
        ACTION_COUNTERS[action].inc()


@event.listens_for(Session, "after_rollback")
def _forget_actions(session: Session) -> None:
    session.info.pop(_PENDING_ACTIONS, None)


def record(
    session: DbSession,
    actor: str,
    action: str,
    kind: str,
    ref: str,
    message: str,
    details: dict[str, Any],
    time: datetime | None = None,
) -> AuditEvent:
    """Adds an audit event to `session` (not committed: it commits with the change it records).

    `actor` is who acted ("rightsizer/updater", or the API caller), `kind` and `ref` the object
    acted on ("Pod", "shop/web-1"), `time` when it happened (None: now; the webhook's counts are
    written later than the admissions they count, and keep the time of the first)."""
    row = AuditEvent(
        cluster_id=cluster_key(session),
        time=time or utcnow(),
        actor=actor,
        action=action,
        object_kind=kind,
        object_ref=ref,
        message=message,
        details=details,
    )
    session.add(row)
    return row


@dataclass(frozen=True)
class Event:
    """An audit event of its own (not part of another change): `record`'s arguments but the
    session and the actor."""

    action: str
    kind: str
    ref: str
    message: str
    details: dict[str, Any]
    time: datetime | None = None


def save_events(session: DbSession, actor: str, events: Iterable[Event]) -> None:
    """Records `events` and commits them with whatever else `session` holds (the scaler's run of
    one scaler: its row and, when it scaled, the event), in one transaction."""
    for e in events:
        record(session, actor, e.action, e.kind, e.ref, e.message, e.details, e.time)
    session.commit()


# What the updater does to a pod (an eviction or resize, answered or not): the changes
# app.core.sizing.observation counts.
POD_CHANGES = ("evict", "resize", "evict-unanswered", "resize-unanswered")


def pod_changes(session: DbSession, actor: str, since: datetime) -> list[tuple[float, Any]]:
    """(unix time, details) of the audit events of `actor`'s POD_CHANGES from `since` on."""
    rows = session.execute(
        select(AuditEvent.time, AuditEvent.details)
        .where(
            AuditEvent.cluster_id == cluster_key(session),
            AuditEvent.actor == actor,
            AuditEvent.action.in_(POD_CHANGES),
            AuditEvent.time >= since,
        )
        .order_by(AuditEvent.time, AuditEvent.id)
    )
    return [(_aware(t).timestamp(), details or {}) for t, details in rows]


def _aware(t: datetime) -> datetime:
    """SQLite gives back naive datetimes: they were written in UTC."""
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)
