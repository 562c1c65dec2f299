"""Recommendation conditions end to end against the simulated cluster: the recommender and the
updater write them (app/jobs/conditions.py, app/jobs/updater.py), the REST API serves them with
each workload, a policy's target without pods included."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from kubernetes import client as k8s

from app.core.workload_key import WorkloadKey
from app.jobs.recommender import RecommenderJob
from app.kube.cluster import ClusterView
from app.kube.limitranges import LimitRangeCache
from app.settings import settings_of
from app.simulator.simulator import Simulator
from app.store.conditions import workload_conditions
from app.store.extensions import db
from app.store.models import Policy
from app.store.session import app_sessions
from tests.support.json_bodies import plain
from tests.support.recommender_runs import add_policy, deployment, step
from tests.support.updater_runs import LEADER, Clock, make_job, recommend

SCENARIO = {
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": "shop"}, {"name": "limited"}],
    "workloads": [
        deployment("shop", "web"),
        deployment("shop", "idle", replicas=0),
        deployment("shop", "solo", replicas=1),
        deployment("limited", "capped", cpu=0.4),
    ],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


@pytest.fixture
def app_config() -> dict[str, object]:
    return {"PUBLIC_READS": True}


@pytest.fixture
def limit_ranges(sim: Simulator, api: Any) -> Iterator[LimitRangeCache]:
    k8s.CoreV1Api(api).create_namespaced_limit_range(
        "limited",
        plain(
            {
                "metadata": {"name": "small"},
                "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]},
            }
        ),
    )
    cache = LimitRangeCache(sim.api_client())
    cache.start()
    assert cache.wait_synced(10)
    yield cache
    cache.stop()


def conditions_of(client_: FlaskClient, ns: str, kind: str, name: str) -> dict[str, dict[str, Any]]:
    resp = client_.get(f"/api/v1/recommendations/{ns}/{kind}/{name}")
    assert resp.status_code == 200, resp.get_json()
    return {c["type"]: c for c in resp.get_json()["conditions"]}


def test_the_recommender_reports_vpas_conditions_and_rightsizers_own(
    app: Flask,
    client: FlaskClient,
    sim: Simulator,
    api: Any,
    cluster: ClusterView,
    limit_ranges: LimitRangeCache,
) -> None:
    web_rs = next(
        rs.metadata.name
        for rs in k8s.AppsV1Api(api).list_namespaced_replica_set("shop").items
        if rs.metadata.name.startswith("web-")
    )
    add_policy(app, "ghost", "shop", "Deployment", "ghost", update_mode="Initial")
    add_policy(app, "rs", "shop", "ReplicaSet", web_rs, update_mode="Initial")
    add_policy(app, "idle", "shop", "Deployment", "idle", update_mode="Initial")
    add_policy(
        app,
        "web",
        "shop",
        "Deployment",
        "web",
        update_mode="Auto",
        container_policies=[{"containerName": "*", "maxAllowed": {"cpu": "50m"}}],
    )
    add_policy(
        app,
        "capped",
        "limited",
        None,
        None,
        update_mode="Initial",
        container_policies=[{"containerName": "*", "minAllowed": {"cpu": "3"}}],
    )
    seen: dict[WorkloadKey, list[str]] = {}

    def history(model: Any, cluster_: Any, have: Any, policies_for: Any = None, **_: Any) -> Any:
        seen.update({w: [c.type for c in cs] for w, cs in workload_conditions(db.session).items()})
        return SimpleNamespace(fed=0, points=[], requests={})

    job = RecommenderJob(
        app_sessions(app),
        cluster,
        settings_of(app),
        history=history,  # a stand-in for PrometheusHistory (app.jobs.history.HistorySource)
        clock=sim.now,
        limit_ranges=limit_ranges,
    )
    for _ in range(2):
        step(sim, job)
    assert seen[WorkloadKey("shop", "Deployment", "web")] == ["FetchingHistory"]

    ghost = conditions_of(client, "shop", "Deployment", "ghost")
    assert ghost["ConfigUnsupported"]["message"] == (
        "Cannot read target Deployment ghost: it does not exist"
    )
    assert ghost["RecommendationProvided"]["status"] == "False"
    rs = conditions_of(client, "shop", "ReplicaSet", web_rs)
    assert "parent controller (Deployment web)" in rs["ConfigUnsupported"]["message"]
    idle = conditions_of(client, "shop", "Deployment", "idle")
    assert idle["NoPodsMatched"]["status"] == "True"
    assert idle["RecommendationProvided"]["reason"] == "NoPodsMatched"
    web = conditions_of(client, "shop", "Deployment", "web")
    assert web["RecommendationProvided"]["status"] == "True"
    assert "FetchingHistory" not in web  # loaded: the run's own conditions replaced it
    assert web["ConfigDeprecated"]["reason"] == "DeprecatedField"
    assert "capped at maxAllowed 50m" in web["LimitedByPolicy"]["message"]
    assert web["LowConfidence"]["reason"] == "ShortHistory"  # two minutes of samples
    assert web["RecommendationProvided"]["lastTransitionTime"]
    capped = conditions_of(client, "limited", "Deployment", "capped")
    assert "LimitRange" in capped["LimitedByLimitRange"]["message"]
    listed = client.get("/api/v1/recommendations?namespace=shop").get_json()["items"]
    ghost_item = next(i for i in listed if i["name"] == "ghost")
    assert ghost_item["containers"] == []  # known only by its conditions


def test_the_updater_reports_what_it_held_back(
    app: Flask, client: FlaskClient, sim: Simulator, cluster: ClusterView, api: Any
) -> None:
    add_policy(app, "solo", "shop", "Deployment", "solo", update_mode="Recreate")  # 1 < 2 replicas
    recommend(app, "solo", cpu=100)
    job = make_job(app, cluster, api, Clock(sim.now()))
    job.run_once(LEADER)
    held = conditions_of(client, "shop", "Deployment", "solo")["HeldBackByBudget"]
    assert held["reason"] == "MinReplicas" and "fewer than minReplicas 2" in held["message"]
    with app.app_context():
        row = db.session.query(Policy).filter_by(name="solo").one()
        row.min_replicas = 1
        db.session.commit()
    job.run_once(LEADER)
    assert "HeldBackByBudget" not in conditions_of(client, "shop", "Deployment", "solo")
