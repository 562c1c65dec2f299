"""The audit trail read back: newest first (by the time of each event, then its id), filtered,
paged by the last event shown (never by offset).

Events are mostly written as they happen, but the webhook's counts are written up to a minute
after the admissions they count and keep their own time (app.webhook.audit), so the order is the
events' time, not the order rows were written. A page ends with a `continue` token (opaque to
clients, as in Kubernetes lists) that resumes after its last event, wherever that event sits in
time; the API and the dashboard page with the same tokens.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, or_, select

from app.store.clusters import cluster_key
from app.store.models import AuditEvent
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
    """Up to `limit` of this cluster's events matching `where`, newest first, and whether more
    follow."""
    q = select(AuditEvent).where(AuditEvent.cluster_id == cluster_key(session))
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
        # after the event the last page ended at, in (time, id) order; the event read here (a
        # token names an event id: earlier tokens stay valid)
        last = select(AuditEvent.time).where(AuditEvent.id == where.before_id).scalar_subquery()
        q = q.where(
            or_(
                AuditEvent.time < last,
                and_(AuditEvent.time == last, AuditEvent.id < where.before_id),
            )
        )
    order = (AuditEvent.time.desc(), AuditEvent.id.desc())
    rows = list(session.scalars(q.order_by(*order).limit(limit + 1)))
    return rows[:limit], len(rows) > limit


CONTINUE_INVALID = "continue: not a token from a previous page of this list"


def encode_continue(last_id: int) -> str:
    """The token for the page after the one that ended at event `last_id`."""
    return base64.urlsafe_b64encode(f"before:{last_id}".encode()).decode().rstrip("=")


def decode_continue(token: str) -> int:
    """The event id a token resumes before; ValueError (CONTINUE_INVALID) for any other text."""
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        prefix, _, number = text.partition(":")
        if prefix != "before" or not number.isdigit() or len(number) > 18:
            raise ValueError(text)
        return int(number)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValueError(CONTINUE_INVALID) from None
