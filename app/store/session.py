"""Sessions, the database's errors, and times as the database holds them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import DataError, OperationalError
from sqlalchemy.orm import Session, scoped_session

from app.store.extensions import db

# Flask-SQLAlchemy's db.session is a scoped_session; jobs may pass a plain Session.
DbSession = Session | scoped_session[Any]

# The errors a caller may answer for: the database is not reachable or broke the connection
# (retry later), or it refused a value of the request (e.g. a NUL character in PostgreSQL text).
DatabaseUnavailable = OperationalError
ValueRefused = DataError


def own_session() -> Session:
    """A session of its own on the application's engine (for a background thread: not the
    request's scoped session). Needs an application context; use it as a context manager."""
    return Session(db.engine)


def ping(session: DbSession) -> None:
    """One round trip; raises whatever the driver raises when the database is not usable."""
    session.execute(select(1))


def to_datetime(t: float | None) -> datetime | None:
    return None if t is None else datetime.fromtimestamp(t, UTC)


def to_unix(d: datetime | None) -> float | None:
    """SQLite hands back naive datetimes: they were written as UTC."""
    if d is None:
        return None
    return (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()
