"""The audit trail read back: newest first, filtered, paged by event id (never by offset)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from app.models import AuditEvent
from app.store.session import DbSession


@dataclass(frozen=True)
class EventFilter:
    """Each field set narrows the list; None leaves it open."""

    action: str | None = None
    object_kind: str | None = None
    object_ref: str | None = None
    actor: str | None = None
    since: datetime | None = None  # inclusive
    until: datetime | None = None  # exclusive
    before_id: int | None = None  # the page after the one that ended at this event


def page(session: DbSession, where: EventFilter, limit: int) -> tuple[list[AuditEvent], bool]:
    """Up to `limit` events matching `where`, newest first, and whether more follow."""
    q = select(AuditEvent)
    for column, value in (
        (AuditEvent.action, where.action),
        (AuditEvent.object_kind, where.object_kind),
        (AuditEvent.object_ref, where.object_ref),
        (AuditEvent.actor, where.actor),
    ):
        if value is not None:
            q = q.where(column == value)
    if where.since is not None:
        q = q.where(AuditEvent.time >= where.since)
    if where.until is not None:
        q = q.where(AuditEvent.time < where.until)
    if where.before_id is not None:
        q = q.where(AuditEvent.id < where.before_id)
    rows = list(session.scalars(q.order_by(AuditEvent.id.desc()).limit(limit + 1)))
    return rows[:limit], len(rows) > limit
