"""Migration 0017: the cluster_totals table, empty after the upgrade (the fleet view then sums
each cluster's rows at the request, as before), dropped by the downgrade without touching the
recommendation rows it is derived from; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask_migrate import downgrade, upgrade

from app.settings import settings
from app.store.cluster_totals import write_totals
from app.store.extensions import db
from app.store.fleet import fleet
from app.store.policies import InvalidPolicyLog
from app.store.savings import Scoper

T = datetime(2026, 12, 7, 5, 0, tzinfo=UTC)


def _rows(sql: str) -> list[dict[str, Any]]:
    return [dict(r._mapping) for r in db.session.execute(sa.text(sql))]


def _scoper() -> Scoper:
    return Scoper.as_configured(db.session, InvalidPolicyLog("test"), settings())


def _recommendation(name: str, target: int) -> None:
    bounds = ", ".join([str(target)] * 8)
    db.session.execute(
        sa.text(
            "INSERT INTO recommendations (cluster_id, namespace, kind, name, container,"
            " target_cpu, target_memory, lower_bound_cpu, lower_bound_memory, upper_bound_cpu,"
            " upper_bound_memory, uncapped_target_cpu, uncapped_target_memory, sample_count,"
            " updated_at, replicas, requested_cpu_total, requested_memory_total, conflicts)"
            f" VALUES ((SELECT min(id) FROM clusters), 'shop', 'Deployment', :n, 'app', {bounds},"
            " 10, CURRENT_TIMESTAMP, 2, 1000, 2000, '{}')"
        ),
        {"n": name},
    )


def _tables() -> set[str]:
    return set(sa.inspect(db.engine).get_table_names())


def test_the_totals_table_is_added_empty_and_dropped_without_loss(app: Flask) -> None:
    db.session.remove()
    downgrade(revision="0016")
    assert "cluster_totals" not in _tables()
    _recommendation("web", 100)
    _recommendation("api", 300)
    db.session.commit()
    rows = "SELECT name, target_cpu, replicas FROM recommendations ORDER BY id"
    before = _rows(rows)
    db.session.remove()
    upgrade(revision="0017")
    assert _rows("SELECT * FROM cluster_totals") == []
    assert _rows(rows) == before
    # no leader has written totals yet: the rows are summed at the request, as before 0017
    shown = fleet(db.session, _scoper).clusters[0]
    assert shown.computed == "request"
    assert (shown.figures.workloads, shown.figures.savings.cpu) == (2, (1000 - 200) + (1000 - 600))
    assert write_totals(db.session, _scoper(), T)
    stored = fleet(db.session, _scoper).clusters[0]
    assert (stored.computed, stored.figures) == ("leader", shown.figures)
    db.session.remove()
    downgrade(revision="0016")
    assert "cluster_totals" not in _tables()
    assert _rows(rows) == before  # the rows the totals came from stay
    db.session.remove()
    upgrade()
    assert _rows("SELECT * FROM cluster_totals") == []
