"""GET /metrics: Prometheus text from the default registry, plus per-route request counts.

The default registry, so every metric another module defines appears here without registering it
twice: the webhook's (app.webhook.metrics, its cache's age computed at scrape time), the jobs'
runs and durations (app.jobs.runner), the evictions, resizes and scale changes (app.store.audit),
the recommendation gauges (app.store.recommendations). This module imports neither the webhook
nor the jobs: app/__init__.py creates them with the app, and what is derived at scrape time is
registered through app.web.probes. Under gunicorn each worker process counts its own requests;
with PROMETHEUS_MULTIPROC_DIR set (prometheus_client's multiprocess mode) the workers' files are
merged so one scrape sees them all, whichever worker leads the jobs
(app.web.probes.scrape_registry).
"""

from __future__ import annotations

import time

from flask import Blueprint, Flask, Response, g, request
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest

from app.store import audit as _audit  # noqa: F401  (action counters)
from app.store import recommendations as _recommendations  # noqa: F401  (gauges)
from app.web.probes import observe_requests, scrape_registry

bp = Blueprint("metrics", __name__)

# Module level: one registration per process, however many apps the tests create.
REQUESTS = Counter(
    "rightsizer_http_requests",
    "HTTP requests answered, by route template, method and status code.",
    ["route", "method", "status"],
)
LATENCY = Histogram(
    "rightsizer_http_request_duration_seconds",
    "Time to answer an HTTP request, by route template and method.",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
AUTH_FAILURES = Counter(
    "rightsizer_api_auth_failures",
    "REST and dashboard requests refused: 401 (no or bad token) and 403 (not allowed).",
    ["status"],
)


@bp.get("/metrics")
def metrics() -> Response:
    return Response(generate_latest(scrape_registry()), mimetype=CONTENT_TYPE_LATEST)


def init_app(app: Flask) -> None:
    """Counts every request by its route template (bounded), never by its raw path."""

    @app.before_request
    def start_timer() -> None:
        g.request_started = time.perf_counter()

    @app.after_request
    def count(response: Response) -> Response:
        route = request.url_rule.rule if request.url_rule else "<unmatched>"
        started = g.get("request_started")
        seconds = None if started is None else time.perf_counter() - started
        observe(route, request.method, response.status_code, seconds)
        return response

    # Requests answered outside Flask's hooks (app.webhook's POST /mutate) are counted the same.
    observe_requests(app, observe)
    app.register_blueprint(bp)


def observe(route: str, method: str, status: int, seconds: float | None) -> None:
    """One request answered: counted by route template, its time observed when known."""
    REQUESTS.labels(route, method, str(status)).inc()
    if seconds is not None:
        LATENCY.labels(route, method).observe(seconds)
    if status in (401, 403):
        AUTH_FAILURES.labels(str(status)).inc()
