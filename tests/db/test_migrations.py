"""The migration builds the schema on SQLite and PostgreSQL, and matches the models exactly."""

from __future__ import annotations

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask import Flask
from flask_migrate import downgrade, upgrade

from app.extensions import db

TABLES = {
    "policies",
    "recommendations",
    "recommendation_history",
    "checkpoints",
    "scalers",
    "audit_events",
}


def test_upgrade_creates_every_table(app: Flask) -> None:
    names = set(sa.inspect(db.engine).get_table_names())
    assert names >= TABLES
    assert "alembic_version" in names


def test_models_match_the_migration(app: Flask) -> None:
    with db.engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(ctx, db.metadata)
    assert diff == []


def test_downgrade_then_upgrade(app: Flask) -> None:
    downgrade(revision="base")
    assert not TABLES & set(sa.inspect(db.engine).get_table_names())
    upgrade()
    assert set(sa.inspect(db.engine).get_table_names()) >= TABLES
