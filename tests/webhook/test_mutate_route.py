"""POST /mutate's own WSGI route (app.webhook.route): answered ahead of Flask's request handling,
yet counted, bounded and failing as the Flask view was."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.webhook import webhook_of
from tests.support.reviews import (
    add_policy,
    add_recommendation,
    app_pod,
    metric,
    patch_of,
    post,
    refresh,
    review,
)


def requests(status: str) -> float:
    return metric("rightsizer_http_requests_total", route="/mutate", method="POST", status=status)


def latencies() -> float:
    return metric("rightsizer_http_request_duration_seconds_count", route="/mutate", method="POST")


def test_reviews_are_counted_as_requests_of_the_mutate_route(
    app: Flask, client: FlaskClient
) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    ok, bad, timed = requests("200"), requests("400"), latencies()
    assert post(client, review(app_pod())).status_code == 200
    assert post(client, {"kind": "Pod"}).status_code == 400
    assert (requests("200"), requests("400"), latencies()) == (ok + 1, bad + 1, timed + 2)


def test_answered_whatever_flask_request_hooks_do(app: Flask, client: FlaskClient) -> None:
    """Failed before: the view ran behind every before_request hook of the application."""
    add_policy()
    add_recommendation()
    refresh(app)

    @app.before_request
    def broken() -> None:
        raise RuntimeError("a hook of another part")

    resp = post(client, review(app_pod()))
    assert resp.status_code == 200
    assert resp.mimetype == "application/json"
    assert patch_of(resp.get_json()["response"])
    assert client.get("/healthz").status_code == 500  # other routes still go through Flask


def test_other_methods_and_paths_go_to_flask(client: FlaskClient) -> None:
    assert client.get("/mutate").status_code == 405
    assert client.put("/mutate", data=b"{}").status_code == 405
    assert client.post("/mutate/", data=b"{}").status_code == 404
    assert client.get("/healthz").get_json() == {"status": "ok"}


def test_a_uid_orjson_cannot_write_is_echoed(app: Flask, client: FlaskClient) -> None:
    """A lone surrogate (json.loads reads the escape) is written escaped, not refused."""
    add_policy()
    add_recommendation()
    refresh(app)
    body = json.dumps(review(app_pod(), uid="\ud800-x"))
    resp = client.post("/mutate", data=body, content_type="application/json")
    assert resp.status_code == 200
    assert json.loads(resp.data)["response"]["uid"] == "\ud800-x"


def test_a_body_shorter_than_its_content_length_is_a_bad_request(client: FlaskClient) -> None:
    resp = client.post(
        "/mutate",
        data=b'{"kind": "AdmissionReview"}',
        headers={"Content-Length": "4096"},
        content_type="application/json",
    )
    assert resp.status_code == 400
    assert resp.get_json()["error"] == "BadRequest"


def test_an_unexpected_error_answers_500_and_is_logged(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    def broken(body: bytes) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(webhook_of(app), "admit", broken)
    before = requests("500")
    resp = post(client, review(app_pod()))
    assert resp.status_code == 500
    assert resp.get_json() == {
        "error": "InternalServerError",
        "message": "internal error; see the server log",
    }
    assert "unhandled error" in caplog.text
    assert requests("500") == before + 1
