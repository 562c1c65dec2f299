"""Migration 0016: clusters gain labels ({} for those already there) and policies a target of
clusters (NULL for those already there: each keeps its one cluster, or all), without loss; its
downgrade keeps a policy targeting every cluster as fleet-wide and deletes one targeting a set
(0013 cannot tell that set apart: let loose, it would govern every cluster)."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask_migrate import downgrade, upgrade

from app.store.extensions import db


def _rows(sql: str) -> list[dict[str, Any]]:
    return [dict(r._mapping) for r in db.session.execute(sa.text(sql))]


def _json(value: Any) -> Any:
    """SQLite hands JSON back as text through a plain SELECT; PostgreSQL decodes it."""
    return json.loads(value) if isinstance(value, str) else value


def _policy(name: str, cluster: int | None) -> None:
    db.session.execute(
        sa.text(
            "INSERT INTO policies (cluster_id, name, namespace, update_mode, container_policies,"
            " version, created_at, updated_at) VALUES (:c, :n, 'shop', 'Off', '[]', 1,"
            " CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
        ),
        {"c": cluster, "n": name},
    )


def test_labels_and_policy_targets_are_added_and_dropped_without_loss(app: Flask) -> None:
    db.session.remove()
    downgrade(revision="0015")
    db.session.execute(
        sa.text(
            "INSERT INTO clusters (uid, name, created_at)"
            " VALUES ('uid-a', 'prod-eu', CURRENT_TIMESTAMP)"
        )
    )
    key = db.session.scalar(sa.text("SELECT id FROM clusters WHERE uid = 'uid-a'"))
    _policy("own", key)
    _policy("everywhere", None)
    db.session.commit()
    before = _rows("SELECT id, cluster_id, name FROM policies ORDER BY id")
    db.session.remove()
    upgrade(revision="0016")
    after = _rows("SELECT id, cluster_id, name, clusters FROM policies ORDER BY id")
    assert [{k: r[k] for k in ("id", "cluster_id", "name")} for r in after] == before
    assert [r["clusters"] for r in after] == [None, None]
    labels = [_json(r["labels"]) for r in _rows("SELECT labels FROM clusters")]
    assert labels == [{}, {}]  # the unclaimed row, and prod-eu
    # targets written at 0016: a set of clusters, and every cluster
    for name, target in (
        ("by-label", {"selector": {"matchLabels": {"env": "prod"}}}),
        ("all", {"selector": {}}),
    ):
        _policy(name, None)
        db.session.execute(
            sa.text("UPDATE policies SET clusters = :t WHERE name = :n"),
            {"t": json.dumps(target), "n": name},
        )
    db.session.execute(sa.text("""UPDATE clusters SET labels = '{"env": "prod"}'"""))
    db.session.commit()
    db.session.remove()
    downgrade(revision="0015")
    kept = _rows("SELECT cluster_id, name FROM policies ORDER BY id")
    assert kept == [
        {"cluster_id": key, "name": "own"},
        {"cluster_id": None, "name": "everywhere"},
        {"cluster_id": None, "name": "all"},
    ]
    columns = {c["name"] for c in sa.inspect(db.engine).get_columns("clusters")}
    assert "labels" not in columns
    db.session.remove()
    upgrade()
