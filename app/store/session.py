"""Sessions, the database's errors, and times as the database holds them.

Code that runs outside any Flask app context (the leader's jobs) is handed a `SessionFactory`:
a plain SQLAlchemy `sessionmaker` on the application's engine whose sessions carry this
process's cluster identity in `session.info` (app.store.clusters reads it there), so the store
answers them exactly as it answers a request.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from flask import Flask
from sqlalchemy import select
from sqlalchemy.exc import DataError, OperationalError
from sqlalchemy.orm import Session, scoped_session, sessionmaker

from app.store.extensions import db

# Flask-SQLAlchemy's db.session is a scoped_session; jobs may pass a plain Session.
DbSession = Session | scoped_session[Any]
# What the jobs are given instead of the app: each call, a new session (use it as a context
# manager: it is closed, and what was not committed rolled back, at the end of the block).
SessionFactory = Callable[[], Session]
# Where a session (session.info) and the app (app.extensions) keep this process's cluster
# identity (app.store.clusters.ClusterIdentity).
CLUSTER_IDENTITY = "rightsizer.cluster"

# The errors a caller may answer for: the database is not reachable or broke the connection
# (retry later), or it refused a value of the request (e.g. a NUL character in PostgreSQL text).
DatabaseUnavailable = OperationalError
ValueRefused = DataError


def own_session() -> Session:
    """A session of its own on the application's engine (for a background thread: not the
    request's scoped session). Needs an application context; use it as a context manager."""
    return Session(db.engine)


def app_sessions(app: Flask) -> SessionFactory:
    """Sessions on `app`'s engine that know its cluster, for code outside its app context."""
    with app.app_context():
        engine = db.engine
    identity = app.extensions.get(CLUSTER_IDENTITY)
    return sessionmaker(engine, info={CLUSTER_IDENTITY: identity} if identity else None)


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
