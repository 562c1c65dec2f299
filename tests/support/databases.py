"""The databases tests run on: SQLite in a temporary directory, or on PostgreSQL a throw-away
database copied from one migrated once per pytest process (`postgres_template`), or an empty
throw-away schema for the tests that migrate it themselves (`postgres_schema_url`).

RIGHTSIZER_TEST_POSTGRES_URL names the PostgreSQL server (its role may create databases); with
RIGHTSIZER_REQUIRE_POSTGRES=1 an unreachable server fails the test instead of skipping it.

The databases a pytest process creates are named `rightsizer_test_<token>...`, and the process
holds a PostgreSQL advisory lock keyed by its token while it runs: a later process drops the
databases whose lock nobody holds (left by a run that was killed), never a running one's.
"""

from __future__ import annotations

import itertools
import os
import secrets
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
import sqlalchemy as sa

POSTGRES_URL = os.environ.get(
    "RIGHTSIZER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REQUIRE_POSTGRES = os.environ.get("RIGHTSIZER_REQUIRE_POSTGRES") == "1"
PREFIX = "rightsizer_test_"
TOKEN_DIGITS = 15  # hexadecimal: 60 bits, a positive bigint for pg_advisory_lock


def reachable_server() -> sa.Engine:
    """An autocommit engine on the server (CREATE DATABASE runs outside a transaction); skips
    the test (fails it with RIGHTSIZER_REQUIRE_POSTGRES=1) when the server is not reachable."""
    engine = sa.create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as e:
        engine.dispose()
        if REQUIRE_POSTGRES:
            pytest.fail(f"PostgreSQL at {POSTGRES_URL} is required but not reachable: {e}")
        pytest.skip(f"PostgreSQL at {POSTGRES_URL} not reachable")
    return engine


def database_url(name: str) -> str:
    """The server's URL naming database `name` instead."""
    url = sa.make_url(POSTGRES_URL).set(database=name)
    return url.render_as_string(hide_password=False)


def postgres_schema_url() -> Iterator[str]:
    """An empty throw-away schema, dropped after the test, for tests that migrate it themselves."""
    engine = reachable_server()
    schema = "t_" + uuid.uuid4().hex[:12]
    with engine.connect() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield f"{POSTGRES_URL}{sep}options=-csearch_path%3D{schema}"
    finally:
        with engine.connect() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        engine.dispose()


@dataclass
class PostgresTemplate:
    """A database migrated once; `copy` gives each test its own database made from it."""

    engine: sa.Engine
    name: str
    _serial: Iterator[int] = field(default_factory=itertools.count)

    def copy(self) -> Iterator[str]:
        """A new database with the template's schema and rows, dropped after the test (even with
        connections left open). WAL_LOG, PostgreSQL 15's default strategy, copies the template
        block by block without the two checkpoints of FILE_COPY (CONTRIBUTING.md: measured)."""
        name = f"{self.name}_{next(self._serial)}"
        with self.engine.connect() as conn:
            conn.execute(sa.text(f"CREATE DATABASE {name} TEMPLATE {self.name} STRATEGY WAL_LOG"))
        try:
            yield database_url(name)
        finally:
            _drop(self.engine, name)


def postgres_template(migrate: Callable[[str], None]) -> Iterator[PostgresTemplate]:
    """A database `migrate` (given its URL) brings to the newest revision, for one pytest
    process: dropped at the end, with the leftovers of killed earlier runs dropped first."""
    engine = reachable_server()
    token = secrets.randbits(4 * TOKEN_DIGITS)
    holder = engine.connect()  # holds the lock, so others know this process's databases live
    try:
        holder.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": token})
        drop_abandoned(engine)
        name = f"{PREFIX}{token:0{TOKEN_DIGITS}x}"
        with engine.connect() as conn:
            conn.execute(sa.text(f"CREATE DATABASE {name}"))
        try:
            migrate(database_url(name))  # must leave no connection to it open: copies need none
            yield PostgresTemplate(engine, name)
        finally:
            _drop(engine, name)
    finally:
        holder.close()
        engine.dispose()


def drop_abandoned(engine: sa.Engine) -> list[str]:
    """Drops the test databases whose process is gone (nobody holds their token's lock) and
    says which."""
    dropped = []
    with engine.connect() as conn:
        names = conn.execute(
            sa.text("SELECT datname FROM pg_database WHERE starts_with(datname, :p)"),
            {"p": PREFIX},
        ).scalars()
        for name in sorted(names):
            try:
                token = int(name[len(PREFIX) :][:TOKEN_DIGITS], 16)
            except ValueError:
                continue  # not one of ours
            if conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": token}).scalar():
                try:
                    _drop(engine, name)
                    dropped.append(name)
                finally:
                    conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": token})
    return dropped


def _drop(engine: sa.Engine, name: str) -> None:
    with engine.connect() as conn:
        conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
