"""/readyz asks each part that can serve from an in-process cache through app.web.probes: the API
knows neither the webhook nor any other part, only what they registered at app creation."""

from __future__ import annotations

from typing import Any

from flask import Flask

from app import create_app
from app.web.probes import cache_states, serve_from_cache

UNREACHABLE = "postgresql+psycopg://nobody@127.0.0.1:1/none"


def outage_app(**config: Any) -> Flask:
    return create_app(
        {"TESTING": True, "SQLALCHEMY_DATABASE_URI": UNREACHABLE, "JOBS": False, **config}
    )


def test_the_webhook_registers_its_cache_at_app_creation() -> None:
    app = outage_app()
    assert cache_states(app) == {"webhook": "cache_empty"}  # tests drive the first load


def test_database_down_is_degraded_while_every_registered_cache_is_fresh() -> None:
    app = outage_app()
    serve_from_cache(app, "webhook", lambda: "fresh")
    resp = app.test_client().get("/readyz")
    assert resp.status_code == 200
    assert resp.get_json()["status"] == "degraded"
    assert "the webhook answers from its cache" in resp.get_json()["message"]


def test_database_down_is_not_ready_when_a_registered_cache_cannot_answer() -> None:
    app = outage_app()
    serve_from_cache(app, "webhook", lambda: "fresh")
    serve_from_cache(app, "other", lambda: "cache_stale")
    resp = app.test_client().get("/readyz")
    assert resp.status_code == 503
    assert resp.get_json()["message"].endswith("; other cache_stale")
