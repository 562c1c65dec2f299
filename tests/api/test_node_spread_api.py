"""GET /api/v1/nodes/spread: the points the leader recorded, oldest first, from `since`."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from app.core.placement.spread import SpreadPoint
from app.store.extensions import db
from app.store.node_spread import record_spread

T0 = 1_780_000_000.0  # 2026-05-28T20:26:40Z


def test_points_oldest_first_from_since(app: Flask, client: FlaskClient) -> None:
    assert client.get("/api/v1/nodes/spread").get_json() == {"items": []}
    for i in range(3):
        record_spread(db.session, SpreadPoint(3, 0.1 * (i + 1), 0.05, 0.2, 0.1, 0.7), T0 + 300 * i)
    db.session.commit()
    items = client.get("/api/v1/nodes/spread").get_json()["items"]
    assert [p["cpuSpread"] for p in items] == [0.1, 0.2, 0.30000000000000004]
    assert items[0] == {
        "time": "2026-05-28T20:26:40Z",
        "nodes": 3,
        "cpuSpread": 0.1,
        "cpuDeviation": 0.05,
        "cpuHottest": 0.7,
        "memorySpread": 0.2,
        "memoryDeviation": 0.1,
    }
    since = client.get(f"/api/v1/nodes/spread?since={T0 + 300:.0f}").get_json()["items"]
    assert [p["time"] for p in since] == [items[1]["time"], items[2]["time"]]


def test_bad_parameters_are_named(client: FlaskClient) -> None:
    resp = client.get("/api/v1/nodes/spread?since=yesterday")
    assert resp.status_code == 400 and "since" in resp.get_json()["message"]
    resp = client.get("/api/v1/nodes/spread?limit=3")
    assert resp.status_code == 400 and "limit" in resp.get_json()["message"]
