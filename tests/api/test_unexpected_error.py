"""An error no handler expects answers 500 with the body POST /mutate writes for one (both from
app.web.error_body), and is logged."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

import app.api.workloads


def test_an_unexpected_error_answers_500_and_is_logged(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    def broken(*args: object) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(app.api.workloads, "recommendation_history", broken)
    resp = client.get("/api/v1/workloads/shop/Deployment/web/history")
    assert resp.status_code == 500
    assert resp.get_json() == {
        "error": "InternalServerError",
        "message": "internal error; see the server log",
    }
    assert "unhandled error" in caplog.text
