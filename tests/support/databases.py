"""The databases tests run on: SQLite in a temporary directory, or a throw-away PostgreSQL schema.

RIGHTSIZER_TEST_POSTGRES_URL names the PostgreSQL server; with RIGHTSIZER_REQUIRE_POSTGRES=1 an
unreachable server fails the test instead of skipping it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

POSTGRES_URL = os.environ.get(
    "RIGHTSIZER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REQUIRE_POSTGRES = os.environ.get("RIGHTSIZER_REQUIRE_POSTGRES") == "1"


def postgres_schema_url() -> Iterator[str]:
    """A throw-away schema per test, so tests never see each other's rows."""
    engine = sa.create_engine(POSTGRES_URL)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as e:
        engine.dispose()
        if REQUIRE_POSTGRES:
            pytest.fail(f"PostgreSQL at {POSTGRES_URL} is required but not reachable: {e}")
        pytest.skip(f"PostgreSQL at {POSTGRES_URL} not reachable")
    schema = "t_" + uuid.uuid4().hex[:12]
    with engine.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield f"{POSTGRES_URL}{sep}options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        engine.dispose()
