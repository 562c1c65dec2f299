"""Proportional scaler rows of this cluster: found and listed (writes go through
app.store.versioned). A scaler belongs to one cluster: its name is unique in that cluster."""

from __future__ import annotations

from sqlalchemy import select

from app.store.clusters import cluster_key
from app.store.models import Scaler
from app.store.session import DbSession


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
