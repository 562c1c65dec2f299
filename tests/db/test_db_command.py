"""`rightsizer db upgrade`, the command the Helm chart's init container and `rightsizer serve`
run, on SQLite and PostgreSQL, from a directory that is not the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

import app.store.models  # noqa: F401  (registers the tables on db.metadata)
from app.store.extensions import db

TABLES = {"policies", "recommendations", "checkpoints", "scalers", "audit_events"}


def rightsizer(database_url: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RIGHTSIZER_DATABASE_URL": database_url, "RIGHTSIZER_JOBS": "false"}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_db_upgrade_creates_the_schema_of_the_models_and_is_idempotent(
    database_url: str, tmp_path: Path
) -> None:
    first = rightsizer(database_url, tmp_path, "db", "upgrade")
    assert first.returncode == 0, first.stderr
    engine = sa.create_engine(database_url)
    try:
        inspector = sa.inspect(engine)
        tables = set(inspector.get_table_names())
        assert tables >= TABLES and "alembic_version" in tables
        assert set(db.metadata.tables) <= tables
        with engine.connect() as conn:
            head = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar_one()
    finally:
        engine.dispose()
    again = rightsizer(database_url, tmp_path, "db", "upgrade")
    assert again.returncode == 0, again.stderr
    current = rightsizer(database_url, tmp_path, "db", "current")
    assert current.returncode == 0 and f"{head} (head)" in current.stdout + current.stderr
