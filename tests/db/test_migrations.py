"""The migration builds the schema on SQLite and PostgreSQL, and matches the models exactly."""

from __future__ import annotations

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask import Flask
from flask_migrate import downgrade, upgrade

from app.store.extensions import db

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


def test_a_scalable_kind_and_a_target_selector_are_stored_and_dropped_by_a_downgrade(
    app: Flask,
) -> None:
    """0008: kinds of any scalable controller (`Kind.group`) fit, policies keep their target's
    apiVersion and selector; a downgrade drops the rows the old columns cannot hold."""
    long_kind = "DeploymentConfig.apps.openshift.io"  # 34 characters: did not fit in 32
    db.session.execute(
        sa.text(
            "INSERT INTO checkpoints (cluster_id, namespace, kind, name, container, cpu_buckets, "
            "cpu_total_weight, memory_buckets, memory_total_weight, sample_count, version, "
            "updated_at) VALUES (1, 'shop', :kind, 'web', 'app', '{}', 0, '{}', 0, 0, 'v3', "
            "'2026-01-01 00:00:00'), (1, 'shop', 'Deployment', 'web', 'app', '{}', 0, '{}', 0, 0, "
            "'v3', '2026-01-01 00:00:00')"
        ),
        {"kind": long_kind},
    )
    db.session.execute(
        sa.text(
            "INSERT INTO policies (name, namespace, target_kind, target_name, target_options, "
            "update_mode, container_policies, version, created_at, updated_at) VALUES "
            "('dc', 'shop', :kind, 'web', :options, 'Off', '[]', 1, '2026-01-01 00:00:00', "
            "'2026-01-01 00:00:00')"
        ),
        {"kind": long_kind, "options": '{"apiVersion": "apps.openshift.io/v1"}'},
    )
    db.session.commit()
    kinds = db.session.execute(sa.text("SELECT kind FROM checkpoints ORDER BY kind")).scalars()
    assert sorted(kinds) == sorted([long_kind, "Deployment"])
    options = db.session.execute(sa.text("SELECT target_options FROM policies")).scalar_one()
    assert "apps.openshift.io/v1" in str(options)
    db.session.remove()
    downgrade(revision="0007")
    kinds = db.session.execute(sa.text("SELECT kind FROM checkpoints")).scalars()
    assert list(kinds) == ["Deployment"]
    assert db.session.execute(sa.text("SELECT count(*) FROM policies")).scalar_one() == 0
    db.session.remove()
    upgrade()


def test_a_policy_placement_is_stored_and_dropped_by_a_downgrade(app: Flask) -> None:
    """0012: policies keep their placement; a downgrade drops the column, the policy stays."""
    db.session.execute(
        sa.text(
            "INSERT INTO policies (name, namespace, update_mode, container_policies, placement, "
            "version, created_at, updated_at) VALUES ('web', 'shop', 'Off', '[]', 'waterLevel', "
            "1, '2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
    )
    db.session.commit()
    placement = db.session.execute(sa.text("SELECT placement FROM policies")).scalar_one()
    assert placement == "waterLevel"
    db.session.remove()
    downgrade(revision="0011")
    columns = {c["name"] for c in sa.inspect(db.engine).get_columns("policies")}
    assert "placement" not in columns
    assert db.session.execute(sa.text("SELECT name FROM policies")).scalar_one() == "web"
    db.session.remove()
    upgrade()
    assert db.session.execute(sa.text("SELECT placement FROM policies")).scalar_one() is None


def test_the_node_spread_table_is_created_and_dropped(app: Flask) -> None:
    """0015: the spread over time; a downgrade drops it and nothing else."""
    db.session.execute(
        sa.text(
            "INSERT INTO node_spread (cluster_id, at, nodes, cpu_spread, cpu_deviation, "
            "memory_spread, memory_deviation, cpu_hottest) VALUES ((SELECT min(id) FROM "
            "clusters), '2026-12-06 10:00:00', 3, 0.4, 0.2, 0.1, 0.05, 0.8)"
        )
    )
    db.session.commit()
    db.session.remove()
    downgrade(revision="0014")
    assert "node_spread" not in sa.inspect(db.engine).get_table_names()
    assert "node_levels" in sa.inspect(db.engine).get_table_names()
    db.session.remove()
    upgrade()
    assert db.session.execute(sa.text("SELECT count(*) FROM node_spread")).scalar_one() == 0


def test_the_levels_ahead_columns_are_added_and_dropped_without_loss(app: Flask) -> None:
    """0018: a node's row keeps its levels through a downgrade (the columns ahead dropped) and
    an upgrade (added back as NULL: none known until the leader's next run)."""
    db.session.execute(
        sa.text(
            "INSERT INTO node_levels (cluster_id, name, cpu_allocatable, memory_allocatable,"
            " cpu_15m, cpu_1h, cpu_1d, memory_15m, memory_1h, memory_1d, metrics_at,"
            " cpu_ahead, memory_ahead) VALUES ((SELECT min(id) FROM clusters), 'n1', 4000,"
            " 1024, 0.5, 0.4, 0.3, 0.2, 0.2, 0.2, '2026-12-07 10:00:00', '[0.5, 0.6]',"
            " '[0.2, 0.2]')"
        )
    )
    db.session.commit()
    db.session.remove()
    downgrade(revision="0017")
    columns = {c["name"] for c in sa.inspect(db.engine).get_columns("node_levels")}
    assert "cpu_ahead" not in columns and "memory_ahead" not in columns
    assert db.session.execute(sa.text("SELECT cpu_15m FROM node_levels")).scalar_one() == 0.5
    db.session.remove()
    upgrade()
    row = db.session.execute(sa.text("SELECT cpu_1h, cpu_ahead FROM node_levels")).one()
    assert tuple(row) == (0.4, None)


def test_the_workload_profiles_table_is_created_and_dropped(app: Flask) -> None:
    """0019: the stored daily profiles; a downgrade drops them and nothing else."""
    db.session.execute(
        sa.text(
            "INSERT INTO workload_profiles (cluster_id, namespace, kind, name, data, saved_at)"
            " VALUES ((SELECT min(id) FROM clusters), 'shop', 'Deployment', 'web', :data,"
            " '2026-12-07 10:00:00')"
        ),
        {"data": b"\x00" * 1920},
    )
    db.session.commit()
    db.session.remove()
    downgrade(revision="0018")
    tables = sa.inspect(db.engine).get_table_names()
    assert "workload_profiles" not in tables and "node_levels" in tables
    db.session.remove()
    upgrade()
    assert db.session.execute(sa.text("SELECT count(*) FROM workload_profiles")).scalar_one() == 0
