"""rightsizer: right-sizes Kubernetes workloads (recommender, webhook, updater, scaler)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from flask import Flask

from app.config import configure
from app.extensions import db, migrate


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """The application factory: environment settings, then `config`'s overrides on top (tests
    use it; see app.config.configure)."""
    app = Flask(__name__)
    app.json.sort_keys = False  # type: ignore[attr-defined]  # keep documented field order
    settings = configure(app, config)
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    db.init_app(app)
    migrate.init_app(app, db, directory=_migrations_dir())

    # The parts are imported here, not at the top: this module runs on every `import app.…` (the
    # simulator's process, app.core alone), which must not load them all. No cycle hides here:
    # no part imports `app` itself (lint-imports: composition-root-on-top, app-acyclic).
    from app import api, auth, dashboard, webhook
    from app.jobs import startup  # with app.jobs.runner: the jobs' metrics, served from the start

    # Each part registers what the shared endpoints ask of it in app.probes (the webhook its
    # cache for /readyz, every part its metrics), so api, dashboard, webhook and jobs stay
    # independent of each other.
    auth.init_app(app)  # the API and the dashboard both check tokens with it
    api.init_app(app)
    webhook.init_app(app)
    dashboard.init_app(app)
    if settings.jobs:
        app.extensions["rightsizer.jobs"] = startup.start_jobs(app)
    return app


def _migrations_dir() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "migrations")
