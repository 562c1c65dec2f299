"""The database each test's app runs on is a copy of one migrated once per session
(tests/support/fixtures.py): the copy must be what running the migrations makes, on SQLite and
on PostgreSQL, and a killed run's PostgreSQL databases must not outlive it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.script import ScriptDirectory
from flask import Flask

from tests.support.databases import (
    PREFIX,
    TOKEN_DIGITS,
    drop_abandoned,
    postgres_schema_url,
    reachable_server,
)
from tests.support.fixtures import migrate


def describe(url: str) -> dict[str, Any]:
    """Every table's columns, keys and indexes, and the revision alembic records."""
    engine = sa.create_engine(url)
    try:
        inspector = sa.inspect(engine)
        tables = {
            t: {
                "columns": [
                    (c["name"], str(c["type"]), c["nullable"], str(c.get("default")))
                    for c in inspector.get_columns(t)
                ],
                "primary key": inspector.get_pk_constraint(t)["constrained_columns"],
                "foreign keys": sorted(
                    (tuple(f["constrained_columns"]), f["referred_table"])
                    for f in inspector.get_foreign_keys(t)
                ),
                "indexes": sorted(
                    (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                    for i in inspector.get_indexes(t)
                ),
                "unique": sorted(
                    tuple(u["column_names"]) for u in inspector.get_unique_constraints(t)
                ),
            }
            for t in inspector.get_table_names()
        }
        with engine.connect() as conn:
            version = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars()
            return {"tables": tables, "version": sorted(version)}
    finally:
        engine.dispose()


@pytest.fixture
def fresh_url(database_url: str, tmp_path: Path) -> Iterator[str]:
    """An empty database of the same kind as the app's, migrated here from nothing."""
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
    else:
        yield from postgres_schema_url()


def test_the_apps_database_is_the_migrations_schema_at_the_newest_revision(
    app: Flask, database_url: str, fresh_url: str
) -> None:
    migrate(fresh_url)
    copy, fresh = describe(database_url), describe(fresh_url)
    head = ScriptDirectory(app.extensions["migrate"].directory).get_current_head()
    assert copy["version"] == [head]
    assert {"policies", "recommendations", "clusters"} <= set(copy["tables"])
    assert copy == fresh


@pytest.mark.parametrize("run", [1, 2])
def test_each_app_has_a_database_of_its_own(app: Flask, database_url: str, run: int) -> None:
    """The second run would find the first's row if the tests shared a database."""
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as conn:
            mine = sa.text("SELECT count(*) FROM clusters WHERE name = 'copies-are-separate'")
            before = conn.execute(mine).scalar()
            conn.execute(
                sa.text(
                    "INSERT INTO clusters (name, labels, created_at) "
                    "VALUES ('copies-are-separate', '{}', CURRENT_TIMESTAMP)"
                )
            )
    finally:
        engine.dispose()
    assert before == 0, f"run {run} found a row of another test"


@pytest.mark.postgres
def test_a_killed_runs_databases_are_dropped_and_a_running_ones_are_kept() -> None:
    engine = reachable_server()
    abandoned, running = (f"{PREFIX}{t:0{TOKEN_DIGITS}x}_0" for t in (0x0AB, 0x0CD))
    holder = engine.connect()  # the running process's lock
    try:
        holder.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": 0x0CD})
        with engine.connect() as conn:
            for name in (abandoned, running):
                conn.execute(sa.text(f"CREATE DATABASE {name}"))
        dropped = drop_abandoned(engine)
        with engine.connect() as conn:
            left = set(
                conn.execute(
                    sa.text("SELECT datname FROM pg_database WHERE datname IN (:a, :r)"),
                    {"a": abandoned, "r": running},
                ).scalars()
            )
        assert abandoned in dropped
        assert left == {running}
    finally:
        holder.close()
        with engine.connect() as conn:
            for name in (abandoned, running):
                conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        engine.dispose()
