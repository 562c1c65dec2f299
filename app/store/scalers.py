"""Proportional scaler rows of this cluster: found, listed, and written (created, replaced,
deleted) with their audit event, committed here. A scaler belongs to one cluster: its name is
unique in that cluster."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.store import audit
from app.store.clusters import cluster_key
from app.store.models import Scaler
from app.store.scaler_codec import scaler_columns, scaler_document
from app.store.session import DbSession
from app.store.versioned import AlreadyExists, commit_created, delete_versioned, update_versioned


def find_scaler(session: DbSession, name: str) -> Scaler | None:
    mine = Scaler.cluster_id == cluster_key(session)
    return session.scalar(select(Scaler).where(mine, Scaler.name == name))


def scaler_exists(session: DbSession, name: str) -> bool:
    mine = Scaler.cluster_id == cluster_key(session)
    return session.scalar(select(Scaler.id).where(mine, Scaler.name == name)) is not None


def all_scalers(session: DbSession) -> list[Scaler]:
    """Every scaler, enabled or not, by name."""
    mine = Scaler.cluster_id == cluster_key(session)
    return list(session.scalars(select(Scaler).where(mine).order_by(Scaler.name)))


def enabled_scalers(session: DbSession) -> list[Scaler]:
    """The scalers the scaler job runs, by name."""
    mine = Scaler.cluster_id == cluster_key(session)
    q = select(Scaler).where(mine, Scaler.enabled.is_(True)).order_by(Scaler.name)
    return list(session.scalars(q))


def create_scaler(session: DbSession, doc: dict[str, Any], actor: str) -> Scaler:
    """Stores the valid document `doc` (read-only fields dropped) as a new scaler of this
    cluster with its audit event, committed. AlreadyExists (nothing written) when its name is
    taken, even by a writer that got in between."""
    name = doc["name"]
    if scaler_exists(session, name):
        raise AlreadyExists
    row = Scaler(**scaler_columns(doc), version=1)
    details = {"after": scaler_document(row)}
    audit.record(session, actor, "create", "Scaler", name, f"created scaler {name}", details)
    commit_created(session, row)
    return row


def replace_scaler(session: DbSession, row: Scaler, doc: dict[str, Any], actor: str) -> None:
    """Writes the valid document `doc` over `row` if it is still at the version read, with its
    audit event, committed (StaleVersion, nothing written, otherwise). `row` reads back as
    stored."""
    before = scaler_document(row)
    name = row.name
    update_versioned(session, row, scaler_columns(doc))
    details = {"before": before, "after": scaler_document(row)}
    audit.record(session, actor, "update", "Scaler", name, f"updated scaler {name}", details)
    session.commit()


def delete_scaler(session: DbSession, row: Scaler, actor: str) -> None:
    """Deletes `row` if it is still at the version read, with its audit event, committed
    (StaleVersion, nothing written, otherwise)."""
    before = scaler_document(row)
    name = row.name
    delete_versioned(session, row)
    audit.record(
        session, actor, "delete", "Scaler", name, f"deleted scaler {name}", {"before": before}
    )
    session.commit()
