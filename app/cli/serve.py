"""`rightsizer serve`: prepare (app.serving.prepare), then become gunicorn."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import click

from app import create_app
from app.serving.prepare import metrics_directory, prepare

# The project's gunicorn settings live inside the package (so an installed rightsizer finds them);
# the application is wsgi.py's, installed beside `app`.
GUNICORN_CONFIG = "python:app.serving.gunicorn_conf"


@click.command("serve")
@click.option("--migrate/--no-migrate", default=True, help="Run `db upgrade` first.")
def serve(migrate: bool) -> None:
    """Migrate the database, register the webhook, then serve with gunicorn (jobs on unless
    RIGHTSIZER_JOBS=false)."""
    os.environ.setdefault("RIGHTSIZER_JOBS", "true")
    prepare(create_app({"JOBS": False}), migrate)  # the jobs run in gunicorn's workers only
    metrics_directory(os.environ)  # before gunicorn: its workers read it when they import
    exec_gunicorn([])


def exec_gunicorn(extra: list[str]) -> None:
    beside = Path(sys.executable).with_name("gunicorn")  # the venv's, even when not on PATH
    gunicorn = str(beside) if beside.exists() else shutil.which("gunicorn") or "gunicorn"
    os.execv(gunicorn, [gunicorn, "-c", GUNICORN_CONFIG, *extra, "wsgi:app"])
