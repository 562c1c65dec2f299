"""Proportional scaler rows: found and listed (writes go through app.store.versioned)."""

from __future__ import annotations

from sqlalchemy import select

from app.models import Scaler
from app.store.session import DbSession


def find_scaler(session: DbSession, name: str) -> Scaler | None:
    return session.scalar(select(Scaler).where(Scaler.name == name))


def scaler_exists(session: DbSession, name: str) -> bool:
    return session.scalar(select(Scaler.id).where(Scaler.name == name)) is not None


def all_scalers(session: DbSession) -> list[Scaler]:
    """Every scaler, enabled or not, by name."""
    return list(session.scalars(select(Scaler).order_by(Scaler.name)))


def enabled_scalers(session: DbSession) -> list[Scaler]:
    """The scalers the scaler job runs, by name."""
    q = select(Scaler).where(Scaler.enabled.is_(True)).order_by(Scaler.name)
    return list(session.scalars(q))
