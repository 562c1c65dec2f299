"""GET /api/v1/workloads/<ns>/<kind>/<name>/histogram: the buckets behind the recommendation."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from app.core.recommend.array_model import ArrayModel
from app.core.workload_key import WorkloadKey
from app.store.extensions import db
from app.store.recommendations import save_all
from app.store.results import results_from_model
from tests.support.usage import NOW


def test_histograms_put_the_weight_where_the_usage_was(app: Flask, client: FlaskClient) -> None:
    m = ArrayModel()
    w = WorkloadKey("shop", "Deployment", "web")
    m.add_usages(
        [
            (w, "web-0", "app", 1_719_792_000.0 + 60 * i, 0.5 if i % 4 else 2.0, 1.0, 1e9)
            for i in range(100)
        ]
    )
    save_all(db.session, results_from_model(m), NOW, batch_size=100)
    resp = client.get("/api/v1/workloads/shop/Deployment/web/histogram")
    assert resp.status_code == 200
    [c] = resp.get_json()["containers"]
    assert c["name"] == "app"
    assert c["sampleCount"] == 100
    cpu = c["cpu"]
    assert cpu["unit"] == "cores"
    assert len(cpu["buckets"]) == 2
    low, high = cpu["buckets"]
    assert low["start"] <= 0.5 < low["end"]
    assert high["start"] <= 2.0 < high["end"]
    assert abs(low["weight"] / high["weight"] - 3) < 0.01  # 75 samples at 0.5, 25 at 2.0
    assert abs(sum(b["weight"] for b in cpu["buckets"]) - cpu["totalWeight"]) < 1e-6
    [mem] = c["memory"]["buckets"]
    assert mem["start"] <= 1e9 < mem["end"]
    assert c["memory"]["unit"] == "bytes"


def test_unknown_workload_is_404(client: FlaskClient) -> None:
    resp = client.get("/api/v1/workloads/shop/Deployment/nope/histogram")
    assert resp.status_code == 404
    assert resp.get_json()["error"] == "NotFound"
