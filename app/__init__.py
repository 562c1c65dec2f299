"""rightsizer: right-sizes Kubernetes workloads (recommender, webhook, updater, scaler)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask

    from app.settings import Settings


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """The application factory: environment settings, then `config`'s overrides on top (tests
    use it; see app.config.configure)."""
    # Imported here, not at the top: this module runs on every `import app.…`, and gunicorn's
    # master (which reads only app.serving.gunicorn_conf and app.config) must not hold Flask,
    # SQLAlchemy and Alembic it never uses (benchmarks/peers.py measures the kept memory).
    from flask import Flask

    from app.config import configure
    from app.store.extensions import db, migrate

    app = Flask(__name__)
    app.json.sort_keys = False  # type: ignore[attr-defined]  # keep documented field order
    settings = configure(app, config)
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    db.init_app(app)
    migrate.init_app(app, db, directory=_migrations_dir())
    _init_cluster_identity(app, settings)

    # The parts are imported here, not at the top: this module runs on every `import app.…` (the
    # simulator's process, app.core alone), which must not load them all. No cycle hides here:
    # no part imports `app` itself (lint-imports: composition-root-on-top, app-acyclic).
    from app import api, dashboard, webhook
    from app.jobs import startup  # with app.jobs.runner: the jobs' metrics, served from the start
    from app.web import auth

    # Each part registers what the shared endpoints ask of it in app.web.probes (the webhook its
    # cache for /readyz, every part its metrics), so api, dashboard, webhook and jobs stay
    # independent of each other.
    auth.init_app(app)  # the API and the dashboard both check tokens with it
    api.init_app(app)
    webhook.init_app(app)
    dashboard.init_app(app)
    if settings.jobs:  # given sessions on the app's database, not the app (app.store.session)
        from app.store.session import app_sessions

        app.extensions["rightsizer.jobs"] = startup.start_jobs(settings, app_sessions(app))
    return app


def _init_cluster_identity(app: Flask, settings: Settings) -> None:
    """This process's cluster in the database (app.store.clusters): RIGHTSIZER_CLUSTER_ID, else
    the kube-system namespace's uid, read when first needed by a process that reaches a cluster
    (in a pod, with RIGHTSIZER_KUBECONFIG, or running the jobs); else the database's only one."""
    from app.kube.client import ClusterUnreachable, api_client
    from app.kube.namespaces import NamespacesUnknown, cluster_uid
    from app.store import clusters

    cluster = settings.cluster
    reaches = bool(cluster.kubeconfig or os.environ.get("KUBERNETES_SERVICE_HOST") or settings.jobs)

    def read_uid() -> str:
        try:
            api = api_client(cluster.kubeconfig or None)
        except ClusterUnreachable as e:  # no usable configuration: asked again next call
            raise clusters.IdentityUnknown(str(e)) from None
        try:
            uid = cluster_uid(api)
        except NamespacesUnknown as e:  # unreachable now: asked again on the next call
            raise clusters.IdentityUnknown(str(e)) from None
        finally:
            api.close()
        if uid is None:
            logging.getLogger(__name__).warning(
                "the kube-system namespace's uid is not readable: this process uses the "
                "database's only cluster (set RIGHTSIZER_CLUSTER_ID in a fleet)"
            )
        return uid or ""

    clusters.init_app(
        app,
        cluster.cluster_id,
        cluster.cluster_name,
        read_uid if reaches else None,
        dict(cluster.cluster_labels),
    )


def _migrations_dir() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "migrations")
