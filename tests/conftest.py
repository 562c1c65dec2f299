"""Shared fixtures: the app on a fresh database (SQLite, and PostgreSQL where marked)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from flask_migrate import upgrade

from app import create_app

POSTGRES_URL = os.environ.get(
    "RIGHTSIZER_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REQUIRE_POSTGRES = os.environ.get("RIGHTSIZER_REQUIRE_POSTGRES") == "1"


def _postgres_schema_url() -> Iterator[str]:
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


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/rightsizer.db"
    else:
        yield from _postgres_schema_url()


@pytest.fixture
def app(database_url: str) -> Iterator[Flask]:
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": database_url})
    with app.app_context():
        upgrade()
        yield app
        from app.extensions import db

        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
