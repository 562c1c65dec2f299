"""GET /metrics: Prometheus text from the default registry, plus per-route request counts.

The default registry, so every metric another module defines appears here without registering it
twice: the webhook's (app.webhook.metrics), the jobs' runs and durations (app.jobs.runner), the
evictions, resizes and scale changes (app.store.audit), the recommendation gauges
(app.store.recommendations), and the webhook cache's age, computed at scrape time. Under
gunicorn each worker process counts its own requests; with PROMETHEUS_MULTIPROC_DIR set
(prometheus_client's multiprocess mode) the workers' files are merged so one scrape sees them
all, whichever worker leads the jobs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

from flask import Blueprint, Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.jobs import runner as _jobs  # noqa: F401  (registers the job metrics before a run)
from app.store import audit as _audit  # noqa: F401  (action counters)
from app.store import recommendations as _recommendations  # noqa: F401  (gauges)
from app.webhook.metrics import CACHE_LAST_SUCCESS

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


LAST_LOAD = "rightsizer_webhook_cache_last_success_timestamp_seconds"


class CacheAge(Collector):
    """rightsizer_webhook_cache_age_seconds: seconds since the newest successful load of the
    webhook cache (over all workers in multiprocess mode); no sample before the first load."""

    def __init__(self, source: Collector) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        loads = [
            s.value
            for family in self.source.collect()
            for s in family.samples
            if s.name == LAST_LOAD
        ]
        family = GaugeMetricFamily(
            "rightsizer_webhook_cache_age_seconds",
            "Seconds since the webhook cache last loaded policies and recommendations.",
        )
        if loads and max(loads) > 0:
            family.add_metric([], max(0.0, time.time() - max(loads)))
        yield family


REGISTRY.register(CacheAge(CACHE_LAST_SUCCESS))


def _registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        merged = multiprocess.MultiProcessCollector(registry)
        registry.register(CacheAge(merged))
        return registry
    return REGISTRY


@bp.get("/metrics")
def metrics() -> Response:
    return Response(generate_latest(_registry()), mimetype=CONTENT_TYPE_LATEST)


def init_app(app: Flask) -> None:
    """Counts every request by its route template (bounded), never by its raw path."""

    @app.before_request
    def start_timer() -> None:
        g.request_started = time.perf_counter()

    @app.after_request
    def count(response: Response) -> Response:
        route = request.url_rule.rule if request.url_rule else "<unmatched>"
        REQUESTS.labels(route, request.method, str(response.status_code)).inc()
        started = g.get("request_started")
        if started is not None:
            LATENCY.labels(route, request.method).observe(time.perf_counter() - started)
        if response.status_code in (401, 403):
            AUTH_FAILURES.labels(str(response.status_code)).inc()
        return response

    app.register_blueprint(bp)
