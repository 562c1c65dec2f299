"""Migration 0013 moves a single-cluster database into the fleet shape without loss: every row
of every per-cluster table (and every policy) keeps its values and belongs to the one cluster,
which the first rightsizer to start then claims (app.store.clusters)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask_migrate import downgrade, upgrade

from app.store import clusters
from app.store.clusters import ClusterRefused, cluster_key
from app.store.extensions import db
from app.store.recommendations import find_recommendations

PER_CLUSTER = (
    "recommendations",
    "recommendation_history",
    "checkpoints",
    "workload_conditions",
    "node_group_recommendations",
    "scalers",
    "audit_events",
    "node_levels",
)


# columns later migrations add to these tables (0016: policies.clusters; 0018: node levels ahead)
LATER = ("clusters", "cpu_ahead", "memory_ahead")


def _value(column: sa.Column[Any], i: int) -> Any:
    """A value of the column's type, different per row `i` (unique keys stay unique)."""
    t = column.type
    if isinstance(t, sa.Boolean):
        return True
    if isinstance(t, sa.Integer):
        return 100 + i
    if isinstance(t, sa.Float):
        return 0.25 + i
    if isinstance(t, sa.DateTime):
        return datetime(2026, 1, 1 + i, tzinfo=UTC)
    if isinstance(t, sa.JSON):
        return {"row": i}
    return f"{column.name}-{i}"


def _rows(table: str) -> list[dict[str, Any]]:
    result = db.session.execute(sa.text(f"SELECT * FROM {table} ORDER BY id"))
    return [dict(r._mapping) for r in result]


def _fill_single_cluster_database() -> dict[str, list[dict[str, Any]]]:
    """Two rows in every table that 0013 gives a cluster, written at 0012 (every column set)."""
    meta = sa.MetaData()
    meta.reflect(db.engine, only=(*PER_CLUSTER, "policies"))
    for table in meta.tables.values():
        for i in range(2):
            values = {c.name: _value(c, i) for c in table.columns if c.name != "id"}
            db.session.execute(table.insert().values(**values))
    db.session.commit()
    return {name: _rows(name) for name in (*PER_CLUSTER, "policies")}


def test_a_single_cluster_database_moves_into_the_fleet_shape_without_loss(app: Flask) -> None:
    downgrade(revision="0012")
    before = _fill_single_cluster_database()
    db.session.remove()
    upgrade()
    assert [{k: r[k] for k in ("id", "uid", "name")} for r in _rows("clusters")] == [
        {"id": 1, "uid": None, "name": ""}
    ]
    for table, rows in before.items():
        after = [{k: v for k, v in r.items() if k not in LATER} for r in _rows(table)]
        assert [r.pop("cluster_id") for r in after] == [1, 1], table
        # SQLite hands back naive datetimes (written as UTC): compare what was stored
        assert [_naive(r) for r in after] == [_naive(r) for r in rows], table
    # the first rightsizer to start claims the moved rows as its cluster's
    clusters.init_app(app, "uid-a", "prod-eu")
    assert cluster_key(db.session) == 1
    assert [r.name for r in find_recommendations(db.session)] == ["name-0", "name-1"]
    assert [(c.uid, c.name) for c in clusters.clusters(db.session)] == [("uid-a", "prod-eu")]
    db.session.remove()
    downgrade(revision="0012")  # a downgrade keeps the one cluster's rows
    for table, rows in before.items():
        assert [_naive(r) for r in _rows(table)] == [_naive(r) for r in rows], table
    db.session.remove()
    upgrade()


def _naive(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v.replace(tzinfo=None) if isinstance(v, datetime) else v for k, v in row.items()}


def test_sqlite_refuses_a_second_cluster(app: Flask, database_url: str) -> None:
    clusters.init_app(app, "uid-a", "prod-eu")
    assert cluster_key(db.session) == 1
    clusters.init_app(app, "uid-b", "prod-us")
    if database_url.startswith("sqlite"):
        with pytest.raises(ClusterRefused, match=r"prod-us \(uid-b\).*SQLite.*prod-eu \(uid-a\)"):
            cluster_key(db.session)
        assert [c.uid for c in clusters.clusters(db.session)] == ["uid-a"]
    else:  # PostgreSQL: the second cluster joins the fleet with a row of its own
        assert cluster_key(db.session) == 2
        assert [c.uid for c in clusters.clusters(db.session)] == ["uid-a", "uid-b"]


def test_without_an_identity_a_database_of_several_clusters_is_refused(
    app: Flask, database_url: str
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite holds one cluster")
    for uid in ("uid-a", "uid-b"):
        clusters.init_app(app, uid, "")
        cluster_key(db.session)
    clusters.init_app(app, "", "")
    with pytest.raises(ClusterRefused, match="RIGHTSIZER_CLUSTER_ID"):
        cluster_key(db.session)


def test_a_claim_raced_by_a_process_of_the_same_cluster_joins_its_row(app: Flask) -> None:
    """Between this process's look-up and its claim, another of the same cluster claims the row:
    this one then uses it (on SQLite too, where a second identity would be refused)."""
    clusters.init_app(app, "uid-a", "a")
    engine = db.engine
    raced: list[bool] = []

    def claim_first(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.startswith("UPDATE clusters") and not raced:
            raced.append(True)
            with engine.begin() as other:
                other.execute(sa.text("UPDATE clusters SET uid = 'uid-a', name = 'a'"))

    sa.event.listen(engine, "before_cursor_execute", claim_first)
    try:
        assert cluster_key(db.session) == 1
    finally:
        sa.event.remove(engine, "before_cursor_execute", claim_first)
    assert raced and [c.uid for c in clusters.clusters(db.session)] == ["uid-a"]
