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
    "workload_conditions",
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


def test_pod_request_totals_are_filled_from_the_single_request_of_older_rows(app: Flask) -> None:
    """0006: a row written before the totals existed gets the sums its one request implied."""
    downgrade(revision="0005")
    db.session.execute(
        sa.text(
            "INSERT INTO recommendations (namespace, kind, name, container, target_cpu, "
            "target_memory, lower_bound_cpu, lower_bound_memory, upper_bound_cpu, "
            "upper_bound_memory, uncapped_target_cpu, uncapped_target_memory, sample_count, "
            "updated_at, current_cpu_request, current_memory_request, replicas) VALUES "
            "('shop', 'Deployment', 'web', 'app', 100, 1, 1, 1, 1, 1, 1, 1, 1, "
            "'2026-01-01 00:00:00', 250, 1048576, 3), "
            "('shop', 'Deployment', 'api', 'app', 100, 1, 1, 1, 1, 1, 1, 1, 1, "
            "'2026-01-01 00:00:00', 250, NULL, NULL)"
        )
    )
    db.session.commit()
    upgrade()
    rows = db.session.execute(
        sa.text(
            "SELECT name, requested_cpu_total, requested_memory_total FROM recommendations "
            "ORDER BY name"
        )
    ).all()
    assert [tuple(r) for r in rows] == [("api", None, None), ("web", 750, 3 * 1048576)]
