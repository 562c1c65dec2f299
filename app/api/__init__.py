"""REST API under /api/v1, the health endpoints and /metrics."""

from __future__ import annotations

from flask import Flask

from app.api import (
    errors,
    events,
    fleet,
    health,
    metrics,
    nodes,
    openapi,
    policies,
    recommendations,
    scalers,
    workloads,
)


def init_app(app: Flask) -> None:
    errors.init_app(app)
    metrics.init_app(app)
    app.register_blueprint(health.bp)
    for module in (recommendations, policies, scalers, workloads, events, nodes, fleet, openapi):
        app.register_blueprint(module.bp, url_prefix="/api/v1")
