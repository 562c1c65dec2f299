"""rightsizer: right-sizes Kubernetes workloads (recommender, webhook, updater, scaler)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from flask import Flask

from app.config import from_environment
from app.extensions import db, migrate


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """The application factory: environment settings, then `config` on top (tests use it)."""
    app = Flask(__name__)
    app.json.sort_keys = False  # type: ignore[attr-defined]  # keep documented field order
    app.config.from_mapping(from_environment())
    if config:
        app.config.from_mapping(config)
    logging.basicConfig(
        level=app.config["LOG_LEVEL"], format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    db.init_app(app)
    migrate.init_app(app, db, directory=_migrations_dir())

    from app import api, auth, webhook

    auth.init_app(app)  # the API and the dashboard both check tokens with it
    api.init_app(app)
    webhook.init_app(app)
    from app import dashboard

    dashboard.init_app(app)
    if app.config["JOBS"]:
        from app.jobs.startup import start_jobs

        app.extensions["rightsizer.jobs"] = start_jobs(app)
    return app


def _migrations_dir() -> str:
    import os

    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "migrations")
