"""Optimistic concurrency for the editable resources (policies, scalers).

Each row carries a `version`. A write is conditional on the version its writer read, in the
UPDATE or DELETE statement itself, so two editors racing cannot both win, not even between one's
read and its write: the loser gets `StaleVersion` and nothing is written. A create racing another
create of the same unique key gets `AlreadyExists`. The API answers them 412 and 409.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError

from app.store.clusters import cluster_key
from app.store.models import utcnow
from app.store.session import DbSession


class StaleVersion(Exception):
    """The row changed or went away since it was read: nothing was written (rolled back)."""


class AlreadyExists(Exception):
    """Another writer created a row with the same unique key first (rolled back)."""


def commit_created(session: DbSession, row: Any) -> None:
    """Adds the new `row` and commits it with what the session holds (its audit event); a row
    given no cluster (nor a policy's target clusters) belongs to this process's
    (app.store.clusters)."""
    if row.cluster_id is None and getattr(row, "clusters", None) is None:
        row.cluster_id = cluster_key(session)
    session.add(row)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise AlreadyExists from None


def update_versioned(session: DbSession, row: Any, values: dict[str, Any]) -> None:
    """Sets `values` on `row`, bumps its version and update time, if it is still at the version
    read; raises StaleVersion otherwise. Not committed: add the audit event, then commit. `row` is
    expired, so reading it again gives the stored values."""
    model = type(row)
    done = session.execute(
        update(model)
        .where(model.id == row.id, model.version == row.version)
        .values(**values, version=row.version + 1, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        session.rollback()
        raise StaleVersion
    session.expire(row)


def delete_versioned(session: DbSession, row: Any) -> None:
    """Deletes `row` if it is still at the version read; raises StaleVersion otherwise. Not
    committed: add the audit event, then commit."""
    model = type(row)
    done = session.execute(
        delete(model)
        .where(model.id == row.id, model.version == row.version)
        .execution_options(synchronize_session=False)
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        session.rollback()
        raise StaleVersion
