"""What `rightsizer serve` does before handing over to gunicorn: migrate the database, create or
renew the certificates, register the webhook, and set up the directory through which gunicorn's
workers share their metrics."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import MutableMapping
from pathlib import Path

from flask import Flask
from flask_migrate import upgrade

from app.serving.registration import register_webhook_on_start
from app.serving.rotation import rotate_certificates
from app.settings import settings_of

log = logging.getLogger(__name__)

METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"


def metrics_directory(env: MutableMapping[str, str]) -> Path:
    """prometheus_client's multiprocess mode for gunicorn's workers: each worker writes its
    metric values to files in one directory and a scrape, whichever worker answers it, merges
    them all. Without it a scrape would show one worker's counts only.

    A directory given in PROMETHEUS_MULTIPROC_DIR is emptied of metric files (those of a previous
    run would be counted again); without one, a new directory under the temporary directory (an
    emptyDir in the chart) is made. Sets the variable for gunicorn and returns the directory."""
    given = env.get(METRICS_DIR_ENV)
    if given:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        for old in path.glob("*.db"):
            old.unlink()
    else:
        path = Path(tempfile.mkdtemp(prefix="rightsizer-metrics-"))
    env[METRICS_DIR_ENV] = str(path)
    log.info("metrics of all workers merged through %s", path)
    return path


def prepare(app: Flask, migrate: bool) -> None:
    with app.app_context():
        if migrate:
            upgrade()
    settings = settings_of(app)
    if settings.certs.rotate:
        # Before gunicorn loads them; the caBundle is written just below.
        done, _ = rotate_certificates(settings, register_ca=False)
        for line in done:
            log.info("certificates: %s", line)
    register_webhook_on_start(app)
