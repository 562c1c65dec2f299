"""In a fleet, each cluster's reads find its own rows by an index led by the cluster, not by
reading every cluster's rows and filtering them: the webhook reloads its snapshot every few
seconds in every process of every cluster, so a scan of the whole fleet's rows there grows with
the number of clusters (benchmarks/fleet.py)."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy import select

from app.store.extensions import db
from app.store.models import Checkpoint, Recommendation, WorkloadCondition
from app.store.models import Policy as PolicyRow
from app.store.policies import governing


def _plan(query: sa.Select[Any]) -> str:
    """The database's plan of `query`, as text; PostgreSQL told to avoid sequential scans where
    any other way exists (its choice on small tables is a scan), so the text names the index
    the query can be served by, if any."""
    conn = db.session.connection()
    sql = str(query.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.exec_driver_sql(f"EXPLAIN {sql}"))
    else:
        plan = "\n".join(str(r[-1]) for r in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))
    db.session.rollback()
    return plan


def test_the_policies_governing_a_cluster_are_read_by_an_index_on_the_cluster(app: Flask) -> None:
    with app.app_context():
        plan = _plan(select(PolicyRow).where(governing(db.session)))
    assert "ix_policies_cluster_id" in plan, plan


@pytest.mark.parametrize("table", [Recommendation, Checkpoint, WorkloadCondition])
def test_a_clusters_rows_are_read_by_the_index_its_key_leads_with(app: Flask, table: Any) -> None:
    with app.app_context():
        plan = _plan(select(table).where(table.cluster_id == 1))
    # PostgreSQL names the unique key's index uq_..., SQLite its automatic index
    assert "Seq Scan" not in plan and f"SCAN {table.__tablename__}" not in plan, plan
    assert "INDEX" in plan.upper(), plan
