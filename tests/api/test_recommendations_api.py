"""GET /api/v1/recommendations and /healthz over the Flask test client, on both databases."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from kubernetes import client as k8s

from app.core.quantity import amount, format_quantity
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from tests.support.recommender_runs import deployment, make_job, step
from tests.support.usage import seed

SCENARIO: dict[str, Any] = {
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": "shop"}],
    "workloads": [deployment("shop", "web", replicas=2), deployment("shop", "api", replicas=3)],
}


def test_list_and_filter(app: Flask, client: FlaskClient) -> None:
    seed()
    body = client.get("/api/v1/recommendations").get_json()
    assert [(i["namespace"], i["kind"], i["name"]) for i in body["items"]] == [
        ("ops", "Deployment", "web"),
        ("shop", "Deployment", "web"),
        ("shop", "StatefulSet", "db"),
    ]
    assert len(client.get("/api/v1/recommendations?namespace=shop").get_json()["items"]) == 2
    assert len(client.get("/api/v1/recommendations?name=web").get_json()["items"]) == 2
    only = client.get("/api/v1/recommendations?namespace=shop&kind=StatefulSet").get_json()
    assert [i["name"] for i in only["items"]] == ["db"]


def test_get_one_in_quantities(app: Flask, client: FlaskClient) -> None:
    seed()
    resp = client.get("/api/v1/recommendations/shop/Deployment/web")
    assert resp.status_code == 200
    [c] = resp.get_json()["containers"]
    assert c["name"] == "main"
    # 0.5 core, 1e9 bytes: 587m and 1168723596 bytes, rounded up to whole MiB
    assert c["target"] == {"cpu": "587m", "memory": "1115Mi"}
    assert c["sampleCount"] == 100
    assert c["firstSampleTime"] == "2024-07-01T00:00:00Z"
    assert set(c) >= {"lowerBound", "upperBound", "uncappedTarget", "lastSampleTime"}


def test_unknown_workload_is_404_json(app: Flask, client: FlaskClient) -> None:
    resp = client.get("/api/v1/recommendations/shop/Deployment/nope")
    assert resp.status_code == 404
    assert resp.get_json() == {
        "error": "NotFound",
        "message": "no recommendation for Deployment shop/nope",
    }


def test_unknown_filter_is_400(app: Flask, client: FlaskClient) -> None:
    resp = client.get("/api/v1/recommendations?namespce=shop")
    assert resp.status_code == 400
    assert "namespce" in resp.get_json()["message"]


def test_unknown_route_and_method_are_json(app: Flask, client: FlaskClient) -> None:
    assert client.get("/api/v1/nothing").get_json()["error"] == "NotFound"
    resp = client.post("/api/v1/recommendations")
    assert resp.status_code == 405
    assert resp.get_json()["error"] == "MethodNotAllowed"


def test_health(app: Flask, client: FlaskClient) -> None:
    assert client.get("/healthz").get_json() == {"status": "ok"}
    assert client.get("/readyz").get_json() == {"status": "ready"}


def test_database_down_is_not_ready_but_alive() -> None:
    from app import create_app

    app = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": "postgresql+psycopg://nobody@127.0.0.1:1/none",
            "PUBLIC_READS": True,
        }
    )
    client = app.test_client()
    assert client.get("/healthz").status_code == 200
    resp = client.get("/readyz")
    assert resp.status_code == 503
    assert resp.get_json()["error"] == "ServiceUnavailable"
    resp = client.get("/api/v1/recommendations")
    assert resp.status_code == 503
    assert resp.get_json() == {
        "error": "ServiceUnavailable",
        "message": "database unavailable; retry later",
    }


def test_current_requests_difference_and_savings_when_known(
    app: Flask, client: FlaskClient
) -> None:
    from sqlalchemy import update

    from app.store.models import Recommendation

    seed()
    before = client.get("/api/v1/recommendations/shop/Deployment/web").get_json()
    assert "currentRequests" not in before["containers"][0]  # nothing known: nothing guessed
    assert "estimatedSavingsPerReplica" not in before
    db.session.execute(
        update(Recommendation)
        .where(Recommendation.namespace == "shop", Recommendation.name == "web")
        .values(current_cpu_request=1000, current_memory_request=2 * 2**30)
    )
    db.session.commit()
    body = client.get("/api/v1/recommendations/shop/Deployment/web").get_json()
    [c] = body["containers"]
    assert c["currentRequests"] == {"cpu": "1", "memory": "2Gi"}
    assert c["difference"] == {"cpu": "-413m", "memory": "-933Mi"}  # 1115Mi - 2048Mi
    assert body["estimatedSavingsPerReplica"] == {
        "cpuCores": 0.413,
        "memoryGiB": round(933 / 1024, 3),
    }


def test_reads_need_a_token_by_default(app: Flask, anon: FlaskClient) -> None:
    assert anon.get("/api/v1/recommendations").status_code == 401


def test_savings_over_the_real_pods(app: Flask, client: FlaskClient) -> None:
    """Three pods asking for 1 core/1Gi, 250m/250Mi and 250m/250Mi (one was resized): the savings
    are the sum over those pods of request - target, not one pod's request times 3."""
    from sqlalchemy import update

    from app.store.models import Recommendation

    seed()  # target 587m, 1115Mi
    db.session.execute(
        update(Recommendation)
        .where(Recommendation.namespace == "shop", Recommendation.name == "web")
        .values(current_cpu_request=250, current_memory_request=250 * 2**20)
    )
    db.session.commit()
    body = client.get("/api/v1/recommendations/shop/Deployment/web").get_json()
    assert "replicas" not in body and "estimatedSavings" not in body  # pods not seen
    assert "podRequests" not in body["containers"][0]

    db.session.execute(
        update(Recommendation)
        .where(Recommendation.namespace == "shop", Recommendation.name == "web")
        .values(replicas=3, requested_cpu_total=1500, requested_memory_total=1524 * 2**20)
    )
    db.session.commit()
    body = client.get("/api/v1/recommendations/shop/Deployment/web").get_json()
    assert body["replicas"] == 3
    [c] = body["containers"]
    assert c["currentRequests"] == {"cpu": "250m", "memory": "250Mi"}  # the most common
    assert c["podRequests"] == {"pods": 3, "cpu": "1500m", "memory": "1524Mi"}
    assert body["estimatedSavings"] == {
        "cpuCores": round((1500 - 3 * 587) / 1000, 3),  # -0.261: they need more CPU
        "memoryGiB": round((1524 - 3 * 1115) / 1024, 3),
    }
    per = body["estimatedSavingsPerReplica"]  # the average pod
    assert per["cpuCores"] == pytest.approx(body["estimatedSavings"]["cpuCores"] / 3, abs=0.001)
    assert abs(per["memoryGiB"]) <= abs(body["estimatedSavings"]["memoryGiB"])
    listed = client.get("/api/v1/recommendations?namespace=shop").get_json()["items"]
    assert [w.get("estimatedSavings") for w in listed] == [body["estimatedSavings"], None]


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


def test_the_recommender_stores_the_live_pods_as_replicas(
    app: Flask, client: FlaskClient, cluster: ClusterView, sim: Simulator
) -> None:
    """Deployments of 2 and 3 replicas in the simulator: the API multiplies by those."""
    scenario_replicas = {w["name"]: w["replicas"] for w in SCENARIO["workloads"]}
    job = make_job(app, cluster, sim)
    for _ in range(3):
        step(sim, job)
    items = {w["name"]: w for w in client.get("/api/v1/recommendations").get_json()["items"]}
    assert set(items) == set(scenario_replicas)
    for name, w in items.items():
        assert w["replicas"] == scenario_replicas[name]
        [c] = w["containers"]
        assert c["currentRequests"] == {"cpu": "500m", "memory": "512Mi"}
        assert c["podRequests"] == {
            "pods": w["replicas"],
            "cpu": format_quantity("cpu", 500 * w["replicas"]),
            "memory": format_quantity("memory", 512 * 2**20 * w["replicas"]),
        }
        per, total = w["estimatedSavingsPerReplica"], w["estimatedSavings"]
        assert total["cpuCores"] == pytest.approx(per["cpuCores"] * w["replicas"], abs=0.002)
        assert total["memoryGiB"] == pytest.approx(per["memoryGiB"] * w["replicas"], abs=0.002)
    # the job set the recommendations gauge after its save
    from app.store.recommendations import RECOMMENDATIONS

    assert RECOMMENDATIONS._value.get() == len(items)


def test_savings_add_up_what_each_real_pod_asks_for(
    app: Flask, client: FlaskClient, cluster: ClusterView, sim: Simulator
) -> None:
    """One of api's 3 pods resized in place to 1 core and 1Gi (the others keep 500m, 512Mi): the
    recommender sums the pods' requests, and the savings are over those pods."""
    core = k8s.CoreV1Api(sim.api_client())
    pods = sorted(
        p.metadata.name for p in core.list_namespaced_pod("shop").items if "api" in p.metadata.name
    )
    assert len(pods) == 3
    resized = {
        "spec": {
            "containers": [
                {"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
            ]
        }
    }
    core.patch_namespaced_pod_resize(pods[0], "shop", resized)
    job = make_job(app, cluster, sim)
    for _ in range(3):
        step(sim, job)
    body = client.get("/api/v1/recommendations/shop/Deployment/api").get_json()
    [c] = body["containers"]
    assert c["currentRequests"] == {"cpu": "500m", "memory": "512Mi"}  # two pods of three
    assert c["podRequests"] == {"pods": 3, "cpu": "2", "memory": "2Gi"}
    target_cpu = amount("cpu", c["target"]["cpu"])
    target_memory = amount("memory", c["target"]["memory"])
    assert body["estimatedSavings"] == {
        "cpuCores": round((2000 - 3 * target_cpu) / 1000, 3),
        "memoryGiB": round((2 * 2**30 - 3 * target_memory) / 2**30, 3),
    }
