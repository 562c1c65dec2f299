"""GET /api/v1/workloads/<ns>/<kind>/<name>/history: the target over time, with the requests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from flask import Flask
from flask.testing import FlaskClient

from app.store.extensions import db
from app.store.models import RecommendationPoint

T0 = datetime(2026, 7, 1, tzinfo=UTC)


def point(
    container: str, hours: int, target_cpu: int, target_memory: int, **current: int
) -> RecommendationPoint:
    return RecommendationPoint(
        namespace="shop",
        kind="Deployment",
        name="web",
        container=container,
        time=T0 + timedelta(hours=hours),
        target_cpu=target_cpu,
        target_memory=target_memory,
        current_cpu_request=current.get("cpu"),
        current_memory_request=current.get("memory"),
    )


def test_history_lists_each_containers_points_oldest_first(app: Flask, client: FlaskClient) -> None:
    db.session.add_all(
        [
            point("app", 2, 450, 2**29, cpu=1000, memory=2**30),
            point("app", 0, 500, 2**28, cpu=1000, memory=2**30),
            point("proxy", 1, 25, 2**27),  # requests not seen then
            point("app", 1, 480, 2**28 + 5, cpu=1000),
        ]
    )
    # Another workload's points stay out of this answer.
    other = point("app", 0, 1, 1)
    other.name = "api"
    db.session.add(other)
    db.session.commit()

    resp = client.get("/api/v1/workloads/shop/Deployment/web/history")
    assert resp.status_code == 200
    body = resp.get_json()
    assert (body["namespace"], body["kind"], body["name"]) == ("shop", "Deployment", "web")
    app_, proxy = body["containers"]
    assert app_["name"] == "app"
    assert [p["time"] for p in app_["points"]] == [
        "2026-07-01T00:00:00Z",
        "2026-07-01T01:00:00Z",
        "2026-07-01T02:00:00Z",
    ]
    assert [p["target"]["cpu"] for p in app_["points"]] == ["500m", "480m", "450m"]
    assert app_["points"][0]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert app_["points"][1]["requests"] == {"cpu": "1"}
    assert app_["points"][1]["target"]["memory"] == str(2**28 + 5)  # exact: not whole Ki
    assert proxy == {
        "name": "proxy",
        "points": [{"time": "2026-07-01T01:00:00Z", "target": {"cpu": "25m", "memory": "128Mi"}}],
    }


def test_history_of_an_unknown_workload_is_404_and_unknown_parameters_400(
    client: FlaskClient,
) -> None:
    resp = client.get("/api/v1/workloads/shop/Deployment/nope/history")
    assert resp.status_code == 404
    assert resp.get_json()["error"] == "NotFound"
    assert client.get("/api/v1/workloads/shop/Deployment/nope/history?since=1").status_code == 400
